"""Accuracy: the logged intermediate tensors, their pairing across two runs or graphs, and drift over decode steps."""
