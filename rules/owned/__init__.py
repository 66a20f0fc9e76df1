"""Where the user is: the hardware they own (tried first, at a smaller format or a shorter context) and free
notebook tiers as sessions. Reads the floors below and consultation/'s option facts.
"""
