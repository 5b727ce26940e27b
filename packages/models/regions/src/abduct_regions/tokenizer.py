"""A tiny BERT-style tokenizer for the ``:tiny`` cross-encoders (no download, no training).

Lower-casing WordPiece over a fixed vocabulary: BERT's special tokens, single characters
(every word can be spelled), and a few hundred frequent words of scene descriptions that get
one token each. Pairs are ``[CLS] A [SEP] B [SEP]`` with token types 0 and 1, as in BERT, so
the same code serves a real checkpoint's tokenizer.
"""

from __future__ import annotations

import string

from transformers import PreTrainedTokenizerFast

SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
_WORDS = """
a an the this that it its is are was were be been has have had do did not no and or but so
of in on at to from by with for about into over under near behind beside left right middle
front back top bottom side up down out off here there someone something somebody person
people man woman men women child children kid dog dogs cat car cars bike bus boat street
road beach snow snowfield forest kitchen office pool swimming farm farmer room house table
chair bed door window wall floor water rain sun night day light dark late red green blue
yellow white black orange purple pink brown gray one two three many some all other just
recently soon later probably likely maybe must might will would could can should may
waiting working playing cooking eating drinking drank drove drive walking walk running sitting
standing swimmer skier hiker sunbather commuter cook worker reading read wearing holding
forgot dropped left using owner family friend party game umbrella umbrellas ball balls bag
bags box hat cup cups bottle bottles book books phone tiny speck clue inference thing things
object place scene image picture region area what why who where when how question answer
change changed if then because yes
""".split()


def tiny_vocabulary() -> list[str]:
    chars = list(string.ascii_lowercase + string.digits + string.punctuation)
    return list(dict.fromkeys([*SPECIALS, *chars, *("##" + c for c in chars), *_WORDS]))


def tiny_tokenizer() -> PreTrainedTokenizerFast:
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    vocab = {token: i for i, token in enumerate(tiny_vocabulary())}
    backend = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    backend.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=True)
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    backend.decoder = decoders.WordPiece(prefix="##", cleanup=True)
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    return PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=backend, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]",
        mask_token="[MASK]", model_input_names=["input_ids", "token_type_ids", "attention_mask"])
