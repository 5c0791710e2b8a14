"""Behaviour of paper 001's word-level perturbations (Moradi & Samwald, section 4.2)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from robustlab.perturbations import PerturbationError, make
from robustlab.perturbations.word_perturbations import wordnet_synonyms
from robustlab.resources import ResourceMissing, wordnet

WORD_NAMES = ["word_delete", "word_repeat", "word_synonym", "negation", "singular_plural_verb",
              "verb_tense", "word_order"]
TEXT = "The committee approved the new budget, and the mayor praised the careful planning."


def words(s: str) -> list[str]:
    return re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)*", s)


@pytest.fixture(scope="module")
def need_wordnet() -> None:
    try:
        wordnet()
    except ResourceMissing as exc:  # pragma: no cover - depends on the machine
        pytest.skip(str(exc))


@pytest.mark.parametrize(
    ("src", "out"),
    [
        ("He likes it.", "He does not like it."),
        ("He does not like it.", "He likes it."),
        ("He doesn't like it.", "He likes it."),
        ("She walked home.", "She did not walk home."),
        ("They play chess.", "They do not play chess."),
        ("The dogs were barking.", "The dogs were not barking."),
        ("It is not bad.", "It is bad."),
        ("I can believe it.", "I cannot believe it."),
        ("We won't stay.", "We will stay."),
        ("He has a car.", "He does not have a car."),
        ("Does he like it?", "Doesn't he like it?"),  # "like": also a preposition
        ("When did Hawaii become a state ?", "When did Hawaii not become a state ?"),
        ("When was Thomas Jefferson born ?", "When was Thomas Jefferson not born ?"),
        ("How many hearts does an octopus have ?", "How many hearts does an octopus not have ?"),
        ("What does NASA stand for ?", "What does NASA not stand for ?"),
        ("What is the capital of France ?", "What isn't the capital of France ?"),
        ("Who wrote Hamlet ?", "Who did not write Hamlet ?"),
        ("there 's a one-of-a-kind film here .", "there 's not a one-of-a-kind film here ."),
        ("they 're happy .", "they 're not happy ."),
        ("i 'm happy .", "i 'm not happy ."),
        ("the film 's plot is thin .", "the film 's plot is not thin ."),
        ("young science fiction fans will stomp away .",
         "young science fiction fans will not stomp away ."),
        ("i do n't like it .", "i like it ."),
        ("What planet is known as the red planet?", "What planet is not known as the red planet?"),
    ],
)
def test_negation_rules(src: str, out: str) -> None:
    assert make("negation").perturb(src) == out


def test_negation_is_symmetric_and_not_label_preserving() -> None:
    p = make("negation")
    assert p.perturb(p.perturb("He likes it.")) == "He likes it."
    assert not p.label_preserving and not p.asymmetric


@pytest.mark.parametrize(
    ("src", "out"),
    [
        ("She walks home.", "She walked home."),
        ("She walked home.", "She walks home."),
        ("They walked home.", "They walk home."),
        ("The dogs are barking.", "The dogs were barking."),
        ("I was happy.", "I am happy."),
        ("He doesn't care.", "He didn't care."),
        ("Anna reads books and writes letters.", None),
    ],
)
def test_verb_tense_rules(src: str, out: str | None) -> None:
    p = make("verb_tense", pps=4)
    if out is None:  # coordinated verbs share the subject
        assert p.perturb(src) == "Anna read books and wrote letters."
    else:
        assert p.perturb(src) == out


@pytest.mark.parametrize(
    ("src", "out"),
    [
        ("He likes it.", "He like it."),
        ("They like it.", "They likes it."),
        ("What does a barometer measure?", "What do a barometer measure?"),
        ("The results were surprising.", "The results was surprising."),
        ("It isn't fair.", "It aren't fair."),
    ],
)
def test_singular_plural_verb_rules(src: str, out: str) -> None:
    assert make("singular_plural_verb").perturb(src) == out


def test_verb_perturbations_leave_verbless_text_alone() -> None:
    for name in ("negation", "verb_tense", "singular_plural_verb"):
        p = make(name)
        assert p.perturb("A very long and quiet night.") == "A very long and quiet night."
        assert p.perturb("Walking home.") == "Walking home."
        assert p.perturb_outcomes(["The old house by the river."])[0].changed is False


@pytest.mark.parametrize("pps", [1, 2, 3, 4])
def test_word_delete_and_repeat_respect_pps(pps: int) -> None:
    base = words(TEXT)
    for s in range(15):
        out = words(make("word_delete", pps=pps).perturb(TEXT, seed=s))
        assert len(out) == len(base) - pps
        it = iter(base)
        assert all(w in it for w in out)  # a subsequence: only deletions
        rep = words(make("word_repeat", pps=pps).perturb(TEXT, seed=s))
        assert len(rep) == len(base) + pps
    assert make("word_delete", pps=4).perturb("Hello there", seed=0) in {"Hello", "there"}


def test_word_synonym_uses_wordnet(need_wordnet: None) -> None:
    assert "film" in wordnet_synonyms("movie")
    assert "films" in wordnet_synonyms("movies")  # re-inflected like the original
    p = make("word_synonym", pps=3)
    src = "The movie received good reviews from careful critics."
    for s in range(10):
        out = p.perturb(src, seed=s)
        a, b = words(src), words(out)
        assert len(a) == len(b)
        diff = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
        assert 1 <= len(diff) <= 3
        for x, y in diff:  # a WordNet synonym of some part of speech of the word
            assert any(y.lower() in wordnet_synonyms(x.lower(), frozenset(pos))
                       for pos in ("n", "v", "a", "r", "na", "ar", "nvar"))


def test_word_order_reorders_one_window() -> None:
    p = make("word_order", window=3)
    base = words(TEXT)
    for s in range(15):
        out = words(p.perturb(TEXT, seed=s))
        assert sorted(out) == sorted(base) and out != base
        changed = [i for i, (x, y) in enumerate(zip(base, out, strict=True)) if x != y]
        assert max(changed) - min(changed) < 3  # within M consecutive words
    assert p.perturb("What is the most common eye color?", seed=1).endswith("?")


@pytest.mark.parametrize("name", WORD_NAMES)
@pytest.mark.parametrize("bad", [0, 5, 1.0, None])
def test_pps_out_of_range(name: str, bad: object) -> None:
    with pytest.raises(PerturbationError, match="pps"):
        make(name, pps=bad)


def test_word_order_window_validated() -> None:
    with pytest.raises(PerturbationError, match="window"):
        make("word_order", window=1)


@pytest.mark.parametrize("name", ["negation", "verb_tense", "singular_plural_verb"])
def test_verb_perturbations_pps_bounds_edits(name: str) -> None:
    # verb_tense shifts whole sentences (v4): its pps counts sentences, the others' clauses
    sep = ". " if name == "verb_tense" else ", "
    src = sep.join(["He likes tea", "she walks home", "they play chess", "we sing songs."])
    for pps in (1, 2, 3):
        for s in range(10):
            out = make(name, pps=pps).perturb(src, seed=s)
            parts = [c for c, d in zip(src.split(sep), out.split(sep), strict=True) if c != d]
            assert 1 <= len(parts) <= pps


def test_verb_tense_shifts_every_verb_of_a_sentence_or_none() -> None:
    """v4: one sentence's finite verbs all change tense together; a sentence whose verbs
    already disagree, or that holds a verb the rule cannot read, is left alone."""
    p = make("verb_tense")
    assert p.perturb("He likes tea, she walks home, they play chess and we sing songs.", seed=0) \
        == "He liked tea, she walked home, they played chess and we sang songs."
    assert p.perturb("charlie was heartbroken when his girlfriend breaks up with him .", seed=0) \
        == "charlie was heartbroken when his girlfriend breaks up with him ."
    assert p.perturb("it's not going to be everyone's bag , but it gives you something .",
                     seed=0) == "it's not going to be everyone's bag , but it gives you something ."
    # v5: a present modal moves back with the rest; a past one keeps the sentence as it is
    assert p.perturb("not a moment will go by when he isn't on camera .", seed=0) \
        == "not a moment would go by when he wasn't on camera ."
    assert p.perturb("it would be fun if it was good .", seed=0) == "it would be fun if it was good ."
    assert p.perturb("the judge gives him a day and thus begins a game .", seed=0) \
        == "the judge gives him a day and thus begins a game ."


@pytest.mark.parametrize(
    ("src", "out"),
    [  # verb_tense v5: verbs find_verbs(wide=True) reads that v4 left in the old tense
        ("the film benefits greatly from a tone , as cho appears to have settled .",
         "the film benefited greatly from a tone , as cho appeared to have settled ."),
        ("wendigo wants to be a monster movie , but it falls into the trap .",
         "wendigo wanted to be a monster movie , but it fell into the trap ."),
        ("the first hour is tedious though ford and neeson capably hold our interest .",
         "the first hour was tedious though ford and neeson capably held our interest ."),
        ("but he's found a way to allow him to escape .", "but he had found a way to allow him to escape ."),
        ("things go from bad to worse when it comes to his attention .",
         "things went from bad to worse when it came to his attention ."),
        ("murphy and wilson actually make a pretty good team .",
         "murphy and wilson actually made a pretty good team ."),
        ("it can't decide what it is .", "it couldn't decide what it was ."),
        ("it ca n't decide what it is .", "it could n't decide what it was ."),
        ("you'll love it if you're a fan .", "you'd love it if you were a fan ."),
        # v6: a sentence naming a year stays in the past (no historical present)
        ("july 1 , 1981 four people were bludgeoned to death .", None),
        # left alone: a verb it cannot shift, an imperative, a noun "will", a PTB "ca" that is none
        ("salma goes native and she's never been better .", None),
        ("stay clear of reminding yourself that it's a true story .", None),
        ("they do some of their best work , but don't be fooled : nobody deserves prizes .", None),
        ("the master compels blake to marry ariel against his will .", None),
        ("a great comedy filmmaker knows great comedy needn't always make us laugh .", None),
        ("while the story's undeniably hard to follow , iwai's gorgeous visuals seduce .", None),
    ],
)
def test_verb_tense_v5_reads_more_verbs(src: str, out: str | None) -> None:
    assert make("verb_tense").perturb(src, seed=0) == (src if out is None else out)


@pytest.mark.parametrize(
    ("src", "out"),
    [  # verb_tense v6: the held-out errors of v5 (draw 3) and dev errors of the fourth draw
        ("men in black ii achieves ultimate insignificance -- it's the sci-fi comedy spectacle .",
         None),
        ("later the lapd is tipped off and they break down the door of the motel room that "
         "he's hiding out in and throw him in la county's celebrity wing .", None),
        ("becoming fast friends , they soon both moved with their families near coney island , "
         "where they became active community leaders .",
         "becoming fast friends , they soon both move with their families near coney island , "
         "where they become active community leaders ."),
        ("green dragon falls prey to some threadbare hollywood conventions , but otherwise "
         "maintains a high level of maturity .", None),
        ("in \" house of 1000 corpses \" , two young couples take a misguided tour onto the back "
         "roads .", None),
        ("however , when a search sets in , the people of dogville demand a better deal .", None),
        ("alex nohe's documentary plays like a travelogue for what mostly resembles a real-life "
         "version of tank girl .", None),
        ("they all dream about finding their prince charming , and all too often settle for "
         "the frog .", None),
        ("children , christian or otherwise , deserve to hear the full story even if they "
         "spend years trying to comprehend it .", None),
        ("the story's so preposterous that i didn't believe it for a second , despite the best "
         "efforts of everyone involved .", None),
        ("in 2001 some 20 , 000+ souls made a pilgrimage to the black rock desert .", None),
        ("landon ( west ) hung with the in-crowd , a guy who breezed through school .", None),
        ("much of the argument is ridiculous ( was ben johnson really part of a cover-up ? ) "
         "but it's good fun .", None),
        ("jones . . . makes a great impression in this little $1 . 8 million charmer , which "
         "may not be cutting-edge but has a huge heart .", None),
        ("este é apenas mais um ( longo ) episódio do programa da mtv .", None),
        # still shifted: a plain sentence, a verb before an object after its subject
        ("the director knows how to apply textural gloss , but his portrait is strictly sitcom .",
         "the director knew how to apply textural gloss , but his portrait was strictly sitcom ."),
        ("his odyssey finally leads him onto a theatre stage .",
         "his odyssey finally led him onto a theatre stage ."),
    ],
)
def test_verb_tense_v6_leaves_doubtful_sentences(src: str, out: str | None) -> None:
    assert make("verb_tense").perturb(src, seed=0) == (src if out is None else out)


@pytest.mark.parametrize(
    ("src", "out"),
    [  # verb_tense v7: nouns read as verbs (the held-out errors of v6, draw 4, and dev errors)
        ("on an african safari , eliza thornberry discovers that thanks to a shaman , she can "
         "now talk to animals .", None),
        ("this girl-woman sincerely believes she can thwart the world's misery with blind good "
         "will .", None),
        ("his big brother george has also made a new friend , will , so stuart is lonely .", None),
        ("something like scrubbing the toilet . or emptying rat traps .", None),
        ("the two go on a long string of tryouts , impressing major league scouts with pitching .",
         None),
        ("the plot twists give i am trying to break your heart an attraction it needed .", None),
        ("he began to understand the forces that had shaped his entire life .", None),
        # still shifted: a singular antecedent, a modal before its verb, a plural after a
        # preposition's noun phrase, a noun compound subject before a noun
        ("he began to understand the force that had shaped his entire life .",
         "he begins to understand the force that has shaped his entire life ."),
        ("you'll forget about it by monday , and so will your kids .",
         "you'd forget about it by monday , and so would your kids ."),
        ("the movie's progression into rambling incoherence gives new meaning to the phrase .",
         "the movie's progression into rambling incoherence gave new meaning to the phrase ."),
        ("if the story lacks bite , the performances are never less than affectionate .",
         "if the story lacked bite , the performances were never less than affectionate ."),
    ],
)
def test_verb_tense_v7_leaves_nouns_read_as_verbs(src: str, out: str | None) -> None:
    assert make("verb_tense").perturb(src, seed=0) == (src if out is None else out)


@pytest.mark.parametrize(
    ("name", "src", "out"),
    [
        ("verb_tense", "When did Hawaii become a state ?", "When does Hawaii become a state ?"),
        ("verb_tense", "What were Christopher Columbus ' three ships ?",
         "What are Christopher Columbus ' three ships ?"),
        ("verb_tense", "How many hearts does an octopus have ?",
         "How many hearts did an octopus have ?"),
        ("verb_tense", "it 's a mess .", "it was a mess ."),
        ("verb_tense", "they 're late .", "they were late ."),
        ("verb_tense", "it 's been a while .", "it had been a while ."),
        ("verb_tense", "having had enough , he goes .", "having had enough , he went ."),
        ("singular_plural_verb", "it 's a mess .", "it are a mess ."),
        ("singular_plural_verb", "they 're late .", "they is late ."),
        ("singular_plural_verb", "What does NASA stand for ?", "What do NASA stand for ?"),
    ],
)
def test_questions_and_clitics(name: str, src: str, out: str) -> None:
    assert make(name).perturb(src, seed=0) == out


@pytest.mark.parametrize("name", ["word_delete", "word_repeat", "word_order", "word_synonym"])
def test_word_level_perturbations_keep_tokens_whole(name: str) -> None:
    """Hyphenated compounds, PTB clitics and alphanumerics are never split (issue 24)."""
    from robustlab.perturbations.text_utils import word_spans

    text = "there 's a one-of-a-kind modern-office vitamin B1 story , is n't it ?"
    whole = {text[a:b] for a, b in word_spans(text)}
    assert {"'s", "one-of-a-kind", "modern-office", "B1", "n't"} <= whole
    p = make(name, pps=4)
    for seed in range(30):
        out = p.perturb(text, seed=seed)
        for tok in ("one-of-a-kind", "modern-office", "B1"):
            # the compound survives whole or is removed/moved whole: never a part of it
            assert tok in out or not any(part in out.split() for part in tok.split("-")
                                         if len(part) > 2) or name == "word_synonym", out
        assert "vitamin1" not in out and "'something" not in out and "B vitamin1" not in out
        assert not re.search(r"(?<![\w'])s\b", out.replace("'s", "")), out  # no stray "s"


def test_word_synonym_context_filters(need_wordnet: None) -> None:
    from robustlab.perturbations.grammar import tokens
    from robustlab.perturbations.word_perturbations import context_pos

    toks = tokens("he is very good at the play and wants to play .")
    assert context_pos(toks, 3, frozenset()) == frozenset("ar")  # after "very"
    assert context_pos(toks, 6, frozenset()) == frozenset("na")  # after "the"
    assert context_pos(toks, 10, frozenset()) == frozenset("v")  # after "to"
    assert "evil" not in wordnet_synonyms("good")  # antonyms never offered
    assert all(s != "bad" for s in wordnet_synonyms("good", frozenset("a")))
    p = make("word_synonym")
    # 'auto' is stored as what it resolved to, so runs with and without the LM never share one
    lm = p.lm_path()
    assert p.signature() == (f"word_synonym/v5(mlm='auto:{Path(lm).name if lm else 'none'}',"
                             "mlm_margin=2.5,pps=1)")
    assert make("word_synonym", mlm="none").signature() == (
        "word_synonym/v5(mlm='none',mlm_margin=2.5,pps=1)")
    assert p.perturb("the Nobel Prize", seed=0) == "the Nobel Prize"  # names left alone
    # v5: a plural possessive keeps its noun; an adverb after a negation and a part of a
    # multi-word WordNet lemma stay
    assert "children'" not in make("word_synonym", mlm="none").perturb(
        "when the kids' van breaks down , they run .", seed=0)
    for text in ("the screenplay isn't nearly clever enough .", "he backs capital punishment ."):
        assert make("word_synonym", mlm="none", pps=4).perturb(text, seed=0) == text


@pytest.mark.slow
def test_word_synonym_masked_lm_is_a_recorded_parameter(need_wordnet, minilm_mlm) -> None:
    p = make("word_synonym", mlm=str(minilm_mlm), pps=2)
    assert "mlm=" + repr(str(minilm_mlm)) in p.signature()
    text = "What is the major fault line near Kentucky ?"
    out = p.perturb(text, seed=0)
    assert out == p.perturb(text, seed=0)  # seeded, deterministic
    assert "bloodline" not in out  # the masked LM rejects what does not fit the sentence
