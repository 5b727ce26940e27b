"""Region features and the training loop shared by abduct's cross-encoders (LXMERT, UNITER)."""
