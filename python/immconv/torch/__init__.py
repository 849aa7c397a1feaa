"""PyTorch front end: `compile(model, example_input)` and `load(model, dir)`.

Imports torch (and torch.fx); the rest of the immconv package does not.
"""
from .bench import benchmark_layers
from .pipeline import DEFAULT_SPARSITY_THRESHOLD, LoadError, build, compile, load, plan
from .fusion import Chain, find_chains
from .module import ShapeMismatch, SpconvConv2d

__all__ = ["DEFAULT_SPARSITY_THRESHOLD", "Chain", "LoadError", "ShapeMismatch", "SpconvConv2d",
           "benchmark_layers", "build", "compile", "find_chains", "load", "plan"]
