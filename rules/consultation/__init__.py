"""One consultation's reasoning: the input facts, the derivation rules' Python callbacks, ranking, findings,
the WHY/HOW chains and the published result. Reads inputs/, planning/ and pricing/.
"""
