"""What the app hands down to its screens: typed access to the advisor state, and which consultation (a single
one or a lifecycle's phase) a screen shows.
"""
