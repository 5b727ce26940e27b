"""What a run leaves for people: the Markdown and HTML reports, and ``abduct compare``."""
