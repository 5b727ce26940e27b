"""LXMERT cross-encoder for abduct."""
