"""A tiny random-config causal LM with a chat template, saved to a folder, for a real
OpenAI-compatible server in tests (``transformers serve``): nothing is downloaded."""

from __future__ import annotations

from pathlib import Path

#: the LM's whole vocabulary besides the specials: the label words and a few others, so that a
#: random model's first word sometimes names a label and often does not
WORDS = ["positive", "negative", "good", "bad", "film", "plot", "the", "a", "is", "not", "maybe",
         "yes", "no", "review", "text", "answer", "sure", "word", ".", ","]

CHAT_TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} {% endfor %}"
                 "{% if add_generation_prompt %}<|assistant|>{% endif %}")


def tiny_chat_lm(folder: Path, seed: int = 0) -> Path:
    """Write a random GPT-2 (2 layers, 32 wide) and a word-level tokenizer to ``folder``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    specials = ["<|endoftext|>", "<unk>", "<|user|>", "<|assistant|>", "<|system|>"]
    vocab = {w: i for i, w in enumerate([*specials, *WORDS])}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    core.decoder = decoders.WordPiece(prefix="##")  # joins words with spaces
    tok = PreTrainedTokenizerFast(tokenizer_object=core, unk_token="<unk>",
                                  eos_token="<|endoftext|>", bos_token="<|endoftext|>",
                                  pad_token="<|endoftext|>",
                                  additional_special_tokens=specials[2:])
    tok.chat_template = CHAT_TEMPLATE
    torch.manual_seed(seed)
    cfg = GPT2Config(vocab_size=len(vocab), n_positions=256, n_embd=32, n_layer=2, n_head=2,
                     bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(cfg)
    with torch.no_grad():  # larger weights than the init: answers that vary with the prompt
        for p in model.parameters():
            p.mul_(8.0)
    model.eval().save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder
