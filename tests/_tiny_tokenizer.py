"""A BERT WordPiece tokenizer over a vocabulary the tests write, for any transformers version.

Built with the ``tokenizers`` library itself: transformers 5's ``BertTokenizerFast(vocab_file=...)``
ignores the file (it keeps only the five special tokens and tokenizes every word as [UNK]), so
fixtures must not depend on that constructor.
"""

from __future__ import annotations

from pathlib import Path


def bert_tokenizer(vocab_file: Path, model_max_length: int = 64):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(Path(vocab_file).read_text("utf-8").split())}
    backend = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    backend.normalizer = normalizers.BertNormalizer(lowercase=True)
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    return PreTrainedTokenizerFast(
        tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
        sep_token="[SEP]", mask_token="[MASK]", model_max_length=model_max_length,
        model_input_names=["input_ids", "token_type_ids", "attention_mask"])
