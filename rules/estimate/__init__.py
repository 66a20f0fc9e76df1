"""`gpuadvisor estimate`: one accelerator and one layout sized by the consultation's own pipeline.
"""
