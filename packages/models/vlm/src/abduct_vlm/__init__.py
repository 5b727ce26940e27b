"""abduct-vlm: vision-language models for abduct.

``vlm:DIR|NAME|tiny`` (any Hugging Face image-text-to-text model through transformers) and
``openai:MODEL,base_url=URL`` (a model behind an OpenAI-compatible chat-completions
endpoint). Both generate; ``vlm`` also scores, ``openai`` where the server returns
log-probabilities. Either can be the ``--judge`` of a judged task.
"""

__version__ = "0.2.0"
