"""An example abduct plugin; read it as a template for your own (start with plugin.py)."""
