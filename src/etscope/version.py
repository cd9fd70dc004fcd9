"""The package version (bottom layer: any module may import it without importing the package API)."""
__version__ = "0.1.0"
