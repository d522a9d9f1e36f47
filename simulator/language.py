"""Bot and user wording.

The bot is deterministic: one fixed string per act, copied act by act from the real DSTC6 test files (so that a
model trained on our data sees the real bot vocabulary). The only bot string absent from the real tst1 files is
the dietary-restriction question of the extra-slot variant (tst3/tst4), for which no real file is at hand.

The user is varied: several patterns per act, written for this simulator in the style of DSTC6 (hesitations,
friends changing their minds), not copied from the real files. Every user pattern is unambiguous for a rule
system: a hesitation never contains a final answer phrase, and a two-value answer always states which value wins.
"""

from __future__ import annotations

# --- bot acts (fixed templates, from the real files) ---------------------------------------------------------
HELLO = "hello what can i help you with today"
ON_IT = "i'm on it"
LOOKING = "ok let me look into some options for you"
READY = "whenever you're ready"
UPDATE = "sure is there anything else to update"
PROPOSE = "what do you think of this option: "
ANOTHER = "sure let me find another option for you"
BOOK = "great let me do the reservation"
HERE = "here it is "
ANYTHING = "is there anything i can help you with"
WELCOME = "you're welcome"
SORRY = "i am sorry, i don't have an answer to that question"
OPTION_WAS = "the option was "
SILENCE = "<silence>"

ASK = {
    "atmosphere": "are you looking for a specific atmosphere",
    "cuisine": "any preference on a type of cuisine",
    "location": "where should it be",
    "number": "how many people would be in your party",
    "price": "which price range are you looking for",
    "restrictions": "do you have any dietary restrictions",
}
ASK_ORDER = ("atmosphere", "cuisine", "location", "number", "price", "restrictions")
"""The bot asks for missing slots in this fixed order (measured on the real files)."""
API_ORDER = ("cuisine", "location", "number", "price", "atmosphere", "restrictions")
"""Slot order inside ``api_call``."""

# --- user: openings --------------------------------------------------------------------------------------------
GREETINGS = ("hello", "hi", "good morning", "good evening", "hey there", "good afternoon")

REQUEST_PREFIXES = (
    "may i have a table",
    "i'd like to book a table",
    "can you book a table",
    "can you make a restaurant reservation",
    "could you reserve a table",
    "we would like a table",
    "please find us a table",
    "i need a restaurant reservation",
    "could you help me book a table",
    "i am looking for a table",
)

# Slot phrases: used in requests and in updates. {v} is the value.
SLOT_PHRASES = {
    "cuisine": ("with {v} food", "with {v} cuisine", "serving {v} food", "that does {v} cooking"),
    "location": ("in {v}", "somewhere in {v}", "located in {v}"),
    "number": ("for {v}", "for {v} people", "for a party of {v}", "for {v} guests"),
    "price": ("in a {v} price range", "in the {v} price range", "with {v} prices"),
    "atmosphere": ("with a {v} atmosphere", "with a {v} ambiance", "with a {v} feel"),
    "restrictions": ("with {v} options", "with a {v} menu", "that caters for {v} diets"),
}

# --- user: answering a slot question -------------------------------------------------------------------------
ANSWERS = {
    "atmosphere": ("i am looking for a {v} atmosphere", "something {v} would be nice", "{v} please",
                   "we want a {v} place", "a {v} setting, ideally"),
    "cuisine": ("{v} food please", "with {v} cuisine", "i feel like eating {v}", "let's have {v}",
                "i'm craving {v} food"),
    "location": ("in {v}", "{v} please", "somewhere in {v}", "let's say {v}", "we are staying in {v}"),
    "number": ("for {v} please", "there will be {v} of us", "{v} people", "a party of {v}", "a table for {v}"),
    "price": ("{v} please", "i am looking for a {v} restaurant", "let's keep it {v}", "{v} price range please",
              "something {v}"),
    "restrictions": ("{v} please", "we need {v} options", "{v} dishes, please", "it has to be {v}"),
}

# Two values mentioned, the answer is {v}; {o} is another value of the same slot. Each pattern says which wins.
TWO_VALUE_ANSWERS = (
    "{o} was my first idea, but my friend wants {v}, so {v} it is",
    "my friend talked me out of {o}, let's go with {v}",
    "i was about to say {o} but {v} is better",
    "not {o} this time, {v} please",
    "we had {o} last week, so this time {v}",
    "{v}, since {o} does not suit us this time",
)
ONE_VALUE_FRIEND = (
    "hold on, my friend just told me she prefers {v}, let's do that",
    "my friend insists on {v}, so let's go with it",
    "after asking my friend, {v} it is",
)

# Hesitations (the bot answers READY). They may mention candidate values but never commit to one.
HESITATIONS = (
    "hmm, let me think about it",
    "i need a moment to decide",
    "good question, let me check with the others",
    "i am torn between {a} and {b}, give me a second",
    "let me ask my friend whether {a} works for her",
    "one second, i am checking with my friend about {a}",
    "{a} maybe... i am not sure yet",
    "i keep hesitating between {a} and {b}",
    "is {a} a good idea? let me think",
)

# --- user: updates (tasks 2 and 5) ----------------------------------------------------------------------------
# Update phrases: a subset of the slot phrases that reads well after "could it be" / "make it".
UPDATE_PHRASES = {
    "cuisine": ("with {v} food", "with {v} cuisine"),
    "location": ("in {v}",),
    "number": ("for {v}", "for {v} people"),
    "price": ("in a {v} price range", "with {v} prices"),
    "atmosphere": ("with a {v} atmosphere", "with a {v} ambiance"),
    "restrictions": ("with {v} options", "with a {v} menu"),
}
UPDATES = (
    "instead could it be {p}",
    "actually i would prefer {p}",
    "my friend changed her mind, we want it {p}",
    "can we change it to a place {p}",
    "sorry, could you make it {p}",
    "on second thought, {p} please",
    "let's switch to a restaurant {p}",
    "hold on, my friend asks if it can be {p} instead",
)
UPDATE_HESITATIONS = (
    "wait, my friend may want to change something",
    "let me double check something with my friend",
    "one moment, i think we need to change something",
    "hmm, i am wondering whether a place {p} would be better",
    "let me ask my friend if she would rather have it {p}",
)
NO_MORE = ("no", "no that's all", "nothing else", "no, that is it", "no it's fine like this")

# --- user: options (tasks 3 and 5) ----------------------------------------------------------------------------
ACCEPT = ("let's do it", "that sounds perfect", "i love that", "yes, book it please", "this one is great",
          "sounds good to me", "perfect, let's go with it")
ACCEPT_LAST = ("ok then, let's take this last one", "fine, we will go with this one")
REJECT = ("no this does not work for me", "i don't like it", "do you have anything else", "not this one",
          "something else please", "no, next one please", "hmm that's not what i want")
UNANSWERABLE = (
    "is there parking nearby", "do they have a terrace", "is it noisy in the evening", "will it be sunny tomorrow",
    "do they accept credit cards", "is there live music", "can i bring my dog", "do they have a kids menu",
    "how far is it from the train station", "do they serve dessert wine", "is the chef famous",
    "are there any museums around", "is it wheelchair accessible",
)
ASK_FIRST = ("what was the first option again", "remind me of the first one you suggested",
             "which was the very first place you proposed")
ASK_PREVIOUS = ("what was the previous one again", "can you remind me of the one before this",
                "sorry, which one did you propose just before this one")

# --- user: task 4 extra information ---------------------------------------------------------------------------
TABLE_AT = ("may i have a table at {n}", "can i get a table at {n}", "please book {n} for us",
            "i'd like a reservation at {n}", "could you reserve {n} for me", "we want to eat at {n}")
ASK_INFO = {
    "phone": ("what is their phone number", "could you give me the phone number", "may i have their phone number",
              "how can i call them, what's the phone number", "do you have the restaurant's phone number"),
    "address": ("what is the address", "could you tell me the address", "where is it exactly, what's the address",
                "may i have the address of the place", "do you have the restaurant's address"),
}
INFO_HESITATIONS = {
    "phone": ("one moment, i am checking with my friend if we need the phone number",
              "let me see if my friend wants their phone number"),
    "address": ("one moment, i am checking with my friend if we need the address",
                "let me see if my friend wants their address"),
}
INFO_CONFIRM = ("yes we need it, please tell me", "ok she needs it after all, what is it", "yes please, go ahead")
INFO_FRIEND = {
    "phone": ("my friend says we need the phone number, what is it",),
    "address": ("my friend says we need the address, what is it",),
}

# --- user: closing (task 5) -----------------------------------------------------------------------------------
THANKS = ("thanks", "thank you so much", "great, thanks a lot", "awesome, thank you", "you are the best")
BYE = ("no thanks", "no, that's all for today", "nothing else, bye", "no thank you, bye")
