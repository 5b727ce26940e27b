"""UNITER cross-encoder for abduct."""
