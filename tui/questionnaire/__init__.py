"""The questionnaire as data and state: its steps and questions, what the user entered turned into answers,
and the one-line model look-up. The screens in tui/screens/ render it.
"""
