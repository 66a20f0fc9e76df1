"""What runs where: deployable units, interconnect topology, the configuration search that sizes each unit
(memory, speed, splits), kept beside its config fact as a Plan. Reads inputs/.
"""
