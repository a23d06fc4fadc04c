"""Vocabulary for the code haystack: identifier parts, imports, exceptions and comment phrases.
Written for this project; numbers in generated code stay small (at most four digits)."""

from __future__ import annotations

VERBS = (
    ("load", "loading"), ("parse", "parsing"), ("read", "reading"), ("write", "writing"),
    ("build", "building"), ("check", "checking"), ("merge", "merging"), ("format", "formatting"),
    ("render", "rendering"), ("fetch", "fetching"), ("resolve", "resolving"), ("normalize", "normalizing"),
    ("collect", "collecting"), ("split", "splitting"), ("filter", "filtering"), ("update", "updating"),
    ("apply", "applying"), ("compute", "computing"), ("validate", "validating"), ("encode", "encoding"),
    ("decode", "decoding"), ("count", "counting"), ("sort", "sorting"), ("group", "grouping"),
    ("scan", "scanning"), ("emit", "emitting"), ("register", "registering"), ("find", "finding"),
    ("select", "selecting"), ("prepare", "preparing"), ("convert", "converting"), ("export", "exporting"),
    ("save", "saving"), ("restore", "restoring"), ("trim", "trimming"), ("match", "matching"),
    ("summarize", "summarizing"), ("drop", "dropping"), ("rank", "ranking"), ("store", "storing"),
)
NOUNS = (
    ("inventory", "inventories"), ("header", "headers"), ("record", "records"), ("config", "configs"),
    ("entry", "entries"), ("batch", "batches"), ("path", "paths"), ("token", "tokens"),
    ("ledger", "ledgers"), ("schedule", "schedules"), ("report", "reports"), ("payload", "payloads"),
    ("index", "indexes"), ("column", "columns"), ("message", "messages"), ("order", "orders"),
    ("segment", "segments"), ("buffer", "buffers"), ("manifest", "manifests"), ("profile", "profiles"),
    ("invoice", "invoices"), ("sample", "samples"), ("table", "tables"), ("field", "fields"),
    ("channel", "channels"), ("queue", "queues"), ("window", "windows"), ("span", "spans"),
    ("route", "routes"), ("section", "sections"), ("rule", "rules"), ("label", "labels"),
    ("request", "requests"), ("response", "responses"), ("row", "rows"), ("chunk", "chunks"),
    ("event", "events"), ("customer", "customers"), ("address", "addresses"), ("shipment", "shipments"),
    ("account", "accounts"), ("parcel", "parcels"), ("supplier", "suppliers"), ("station", "stations"),
)
QUALIFIERS = ("raw", "pending", "active", "default", "current", "cached", "local", "remote", "partial",
              "valid", "empty", "first", "last", "next", "shared", "stale")
CLASS_SUFFIXES = ("Loader", "Parser", "Store", "Registry", "Builder", "Cache", "Reader", "Writer", "Index",
                  "Queue", "Manager", "Formatter", "Validator", "Scheduler", "Tracker", "Client")
PLAIN_NAMES = ("count", "total", "result", "name", "value", "key", "line", "parts", "offset", "limit",
               "text", "item", "size", "missing", "seen", "pending", "current", "matched", "width", "prefix")
COUNTERS = ("count", "total", "offset", "skipped", "retries", "width", "depth", "position")
IMPORTS = ("import csv", "import json", "import math", "import os", "import re", "import time",
           "import itertools", "import functools", "from collections import defaultdict",
           "from collections import Counter", "from pathlib import Path", "from typing import Any",
           "from typing import Iterable", "from dataclasses import dataclass", "import hashlib",
           "import textwrap")
EXCEPTIONS = ("ValueError", "KeyError", "OSError", "TypeError", "LookupError", "RuntimeError")
FIELD_TYPES = (("str", '""'), ("int", "0"), ("float", "0.0"), ("bool", "False"), ("Path | None", "None"),
               ("tuple[str, ...]", "()"), ("int | None", "None"), ("str", '"utf-8"'), ("int", "64"))
DOC_TAILS = ("from the given path", "and return the result", "for each {noun}", "without changing the input",
             "in the order they were read", "if it is not already cached", "and log any problems",
             "so that later steps can rely on it", "and skip the ones that are empty",
             "using the current settings", "before they are written back", "for the active {noun}")
MODULE_DOCS = ("Helpers for {g1} {n1} and {g2} {n2}.", "Utilities that {v1} {n1} before {g2} them.",
               "Small tools for {g1} {n1}.", "Reading, checking and {g1} {n1} for the {n2} pipeline.",
               "Routines used when {g1} {n1} and their {n2}.", "The {n1} layer: {g1}, {g2} and caching.")
COMMENTS = ("Skip {n1} without a {noun}.", "Keep the original order of the {n1}.",
            "The {noun} may be empty here.", "Fall back to the default {noun}.",
            "This is cheaper than {g1} every {noun} again.", "Nothing to do when the {noun} is missing.",
            "Older files store the {noun} under a different key.", "Group the {n1} before {g1} them.",
            "Avoid {g1} the same {noun} twice.", "The {noun} is trusted at this point.",
            "Normalise the {noun} so comparisons are stable.", "Stop early once the limit is reached.")
