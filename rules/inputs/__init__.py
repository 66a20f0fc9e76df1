"""What the user said: the answers validated once, resolved against the catalog, typed (the Workload, the formats)
and turned into the fact vocabulary. Imports knowledge/ and rules/sizing only.
"""
