"""Several workloads under one budget: each phase consulted as a one-workload file would be, then one fleet for
the whole chosen by the same decision cost.
"""
