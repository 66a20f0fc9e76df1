"""What an option costs its owner over the horizon: rentals, purchases with their machines and fabric, power,
site, resale by age, engineering. Reads inputs/ and planning/.
"""
