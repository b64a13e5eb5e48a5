#!/usr/bin/env python3
"""Writes LlamaDesk Guide's training dialogues from facts.json, and nothing else.

Each dialogue has 1 to 4 turns in the Llama 2 chat format (a system prompt on some first turns),
mixing topics, follow-ups that refer to the previous answer, small talk and questions to decline.
A topic is asked with one of its listed questions or with a question frame filled with one of its
acts, subjects or situations; questions are then varied by synonyms, a preamble, a place ("in the app"),
openers, closers, casing, a dropped word or a typo. Each phrasing is meant to be seen about once in
training (60 000 dialogues for 1 100 steps), so the model learns the words that carry a topic rather
than whole sentences. Held-out and development questions (heldout.json, dev.json) are never used here: the script
refuses facts.json if it lists one, and draws a dialogue again if a variation happens to spell one.

  python3 generate_corpus.py --out corpus.jsonl --text tokenizer_corpus.txt
"""
import argparse
import json
import os
import random
import re

HERE = os.path.dirname(os.path.abspath(__file__))

OPENERS = ["", "", "", "", "Hi, ", "Hey, ", "Quick question: ", "Excuse me, ", "Tell me, ", "I wonder: ", "So ",
           "Can you tell me: ", "I'd like to know: ", "One more thing: ", "Help! ", "Sorry, ", "Okay, "]
FILLER_WORDS = {"the", "a", "an", "my", "to", "do", "is", "it", "in", "of", "for", "this", "that", "me", "i", "does",
                "can", "just", "your", "there"}
CLOSERS = ["", "", "", " Thanks.", " Please.", " Thank you!"]
PREAMBLES = ["I'm new to LlamaDesk. ", "I just installed LlamaDesk. ", "Sorry if this is obvious. ", "Quick one. ",
             "I've been using the app for a while. ", "Newbie here. ", "Question about LlamaDesk: ", "Hmm. ",
             "I have a question. ", "Another thing. ", "I'm confused. "]
PLACES = [" in LlamaDesk", " in this app", " here", " in the app", " with LlamaDesk", " right now"]
FOLLOW_PREFIXES = ["And ", "But ", "Also, ", "Then ", "Wait, ", "Hmm, ", "OK, and ", "Right. "]


def swap_synonyms(question, synonyms, rng):
    """Each listed word or phrase (whole words, longest first) swapped for an alternative at random."""
    keys = sorted((k for k in synonyms if k != "about"), key=len, reverse=True)
    pattern = re.compile(r"\b(" + "|".join(re.escape(k) for k in keys) + r")\b(?! Guide)")
    return pattern.sub(lambda m: rng.choice(synonyms[m.group(1)]) if rng.random() < 0.5 else m.group(1), question)


def decline_question(decline, rng):
    """A listed general question, or one composed from the decline frames and their subjects."""
    if rng.random() < 0.4:
        return rng.choice(decline["questions"])
    t = decline["templates"]
    frame = rng.choice(t["frames"])
    return re.sub(r"\{(\w+)\}", lambda m: rng.choice(t[m.group(1)]), frame)


def topic_question(topic, frames, rng):
    """A listed question 35 % of the time; otherwise a frame filled with one of the topic's acts, subjects or
    situations."""
    kinds = [k for k in ("act", "subject", "situation") if topic.get(k + "s")]
    if not kinds or rng.random() < 0.35:
        return rng.choice(topic["questions"])
    kind = rng.choices(kinds, weights=[0.5 if k == "situation" else 1.0 for k in kinds])[0]
    q = rng.choice(frames[kind]).replace("{" + kind + "}", rng.choice(topic[kind + "s"]))
    return q[0].upper() + q[1:]


def misspell(word, rng):
    i = rng.randrange(1, len(word) - 2)
    if rng.random() < 0.5:
        return word[:i] + word[i + 1:]
    return word[:i] + word[i + 1] + word[i] + word[i + 2:]


def add_noise(question, rng):
    """Sometimes a filler word dropped or a longer word misspelled, as people type."""
    words = question.split(" ")
    r = rng.random()
    droppable = [i for i, w in enumerate(words) if w.lower() in FILLER_WORDS]
    if r < 0.12 and len(words) >= 4 and droppable:
        del words[rng.choice(droppable)]
    elif r < 0.2:
        long_words = [i for i, w in enumerate(words) if len(w) >= 5 and w.isalpha()]
        if long_words:
            i = rng.choice(long_words)
            words[i] = misspell(words[i], rng)
    return " ".join(words)


def vary(question, rng, synonyms, follow=False):
    q = add_noise(swap_synonyms(question, synonyms, rng), rng)
    if not follow and q.endswith("?") and len(q.split()) >= 3 and rng.random() < 0.12:
        q = q[:-1] + rng.choice(PLACES) + "?"
    if rng.random() < 0.25:
        q = q.rstrip("?.!")
    if follow and rng.random() < 0.25:
        q = rng.choice(FOLLOW_PREFIXES) + (q[0].lower() + q[1:] if not q.startswith("I ") else q)
    elif not follow and rng.random() < 0.12:
        q = rng.choice(PREAMBLES) + q
    opener = rng.choice(OPENERS)
    if opener and q[:1].isupper() and not q.startswith("I ") and rng.random() < 0.7:
        q = q[0].lower() + q[1:]
    if rng.random() < 0.1:
        q = q.lower()
    return (opener + q + rng.choice(CLOSERS)).strip()


def dialogue(facts, rng):
    topics = facts["topics"]
    decline = facts["decline"]
    synonyms = facts["synonyms"]
    turns = []
    n_turns = rng.choice([1, 1, 2, 2, 2, 3, 3, 4])
    previous = None
    while len(turns) < n_turns:
        if previous is not None and previous.get("followups") and rng.random() < 0.65:
            follow = rng.choice(previous["followups"])
            turns.append({"user": vary(rng.choice(follow["questions"]), rng, synonyms, follow=True),
                          "answer": rng.choice(follow["answers"])})
            previous = None
            continue
        if rng.random() < 0.15:
            turns.append({"user": vary(decline_question(decline, rng), rng, synonyms),
                          "answer": rng.choice(decline["answers"])})
            previous = None
            continue
        topic = rng.choice(topics)
        turns.append({"user": vary(topic_question(topic, facts["frames"], rng), rng, synonyms),
                      "answer": rng.choice(topic["answers"])})
        previous = topic
    system = rng.choice(facts["system_prompts"]) if rng.random() < 0.3 else ""
    return {"system": system, "turns": turns}


def render(d):
    """The text of a dialogue as the Llama 2 chat template lays it out (for the tokenizer)."""
    parts = []
    for i, t in enumerate(d["turns"]):
        user = t["user"]
        if i == 0 and d["system"]:
            user = f"<<SYS>>\n{d['system']}\n<</SYS>>\n\n{user}"
        parts.append(f"[INST] {user.strip()} [/INST] {t['answer'].strip()} ")
    return "\n".join(parts)


def normalized(question):
    return re.sub(r"[^a-z0-9+]+", " ", question.lower()).strip()


def check_heldout_unseen(facts, heldout):
    """The held-out questions, normalized; refuses facts.json if it lists one of them."""
    asked = {normalized(turn["user"]) for item in heldout for turn in item["turns"]}
    seen = {q.lower().strip(" ?.!") for t in facts["topics"] for q in t["questions"]}
    seen |= {q.lower().strip(" ?.!") for t in facts["topics"] for f in t.get("followups", []) for q in f["questions"]}
    seen |= {q.lower().strip(" ?.!") for q in facts["decline"]["questions"]}
    for item in heldout:
        for turn in item["turns"]:
            if turn["user"].lower().strip(" ?.!") in seen:
                raise SystemExit(f"held-out question is also a training question: {turn['user']!r}")
    return asked


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--facts", default=os.path.join(HERE, "facts.json"))
    ap.add_argument("--heldout", nargs="+", default=[os.path.join(HERE, n) for n in ("heldout.json", "dev.json")])
    ap.add_argument("--dialogues", type=int, default=60000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True, help="JSON lines, one dialogue each")
    ap.add_argument("--text", required=True, help="plain text for training the tokenizer")
    args = ap.parse_args()
    with open(args.facts) as f:
        facts = json.load(f)
    items = []
    for path in args.heldout:
        with open(path) as f:
            items += json.load(f)["items"]
    heldout = check_heldout_unseen(facts, items)
    rng = random.Random(args.seed)
    with open(args.out, "w") as out, open(args.text, "w") as text:
        for _ in range(args.dialogues):
            d = dialogue(facts, rng)
            # a variation that happens to spell a held-out question is drawn again
            while any(normalized(t["user"]) in heldout for t in d["turns"]):
                d = dialogue(facts, rng)
            out.write(json.dumps(d) + "\n")
            text.write(render(d) + "\n")
    print(f"wrote {args.dialogues} dialogues to {args.out}")


if __name__ == "__main__":
    main()
