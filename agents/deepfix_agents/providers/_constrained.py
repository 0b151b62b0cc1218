"""Schema-constrained decoding: a causal LM writes JSON that validates by construction.

Why: a 135M-parameter model asked for JSON answers with prose, unbalanced brackets or
invented category ids most of the time, and every retry costs a full generation. Here
the model never writes structure at all: the decoder walks a small JSON schema and

* emits every literal itself (braces, keys, commas, quotes), feeding the tokens to the
  model so that it keeps reading its own answer;
* lets the model choose only where the schema leaves a choice: an ``enum`` value (the
  tokens of the options form a trie; the model picks among the next tokens still on a
  path), whether an array goes on (``,``) or ends (``]``), and the characters inside a
  string, from tokens that cannot break out of it (no quote, backslash or control
  character) until ``maxLength`` or the model's closing quote.

So every answer parses and validates; what stays the model's is the content. Greedy at
``temperature == 0`` (deterministic on a given machine); seeded sampling otherwise.

Supported schema subset (anything else raises :class:`SchemaError` when the decoder is
built, never halfway through an answer):

* ``{"type": "object", "properties": {...}}``: every property, in the given order;
* ``{"enum": [...]}`` of strings and ``null``; ``{"const": value}``;
* ``{"type": "string", "minLength": m, "maxLength": n}`` (``maxLength`` required);
* ``{"type": "array", "items": {...}, "minItems": m, "maxItems": n}`` (``m >= 1``), plus
  ``"x-distinct": "<property>"`` to forbid repeating an enum property's value across
  items (one finding per category);
* ``{"anyOf": [object, ...]}`` where the objects share their first property, an
  ``enum``/``const``: the value chosen there selects the variant.
"""

from __future__ import annotations

import inspect
import json
import time
from typing import Any

#: divides (multiplies, when negative) the logit of a token already used in the string
REPEAT_PENALTY = 1.3


class SchemaError(ValueError):
    """The schema uses something the constrained decoder does not support."""


class DecodeTimeout(TimeoutError):
    """The answer was not finished within the time budget."""


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte <-> printable character table used by byte-level BPE vocabularies."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
    printable += list(range(ord("®"), ord("ÿ") + 1))
    codes = printable[:]
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            codes.append(256 + extra)
            extra += 1
    return dict(zip(printable, (chr(c) for c in codes)))


class TokenTable:
    """What each token of a byte-level BPE vocabulary spells, and which tokens may stand
    inside a JSON string. Built once per tokenizer (about 0.2 s for 49k tokens)."""

    def __init__(self, tokenizer: Any):
        self.tokenizer = tokenizer
        to_byte = {char: byte for byte, char in _bytes_to_unicode().items()}
        size = tokenizer.get_vocab_size()
        special = {
            index for index, token in tokenizer.get_added_tokens_decoder().items() if token.special
        }
        self.text: list[str | None] = []
        string_ok: list[int] = []
        for index in range(size):
            piece = tokenizer.id_to_token(index)
            text = None
            if piece is not None and index not in special:
                try:
                    text = bytes(to_byte[c] for c in piece).decode("utf-8")
                except (KeyError, UnicodeDecodeError):
                    text = None
            self.text.append(text)
            if text and not any(c in '"\\' or ord(c) < 0x20 or ord(c) == 0x7F for c in text):
                string_ok.append(index)
        self.string_ok = string_ok
        quote = self.encode('"')
        if len(quote) != 1:
            raise SchemaError("the vocabulary has no single token for '\"'")
        self.quote = quote[0]

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False).ids)


class ConstrainedDecoder:
    """Writes one JSON value for ``schema`` after a prompt, with a KV-cached causal LM.

    ``model`` is a ``transformers`` causal LM; ``table`` a :class:`TokenTable` of its
    tokenizer. ``deadline`` is a ``time.perf_counter()`` value past which the decoder
    raises :class:`DecodeTimeout` (checked before every forward pass).
    """

    def __init__(
        self,
        model: Any,
        table: TokenTable,
        schema: dict[str, Any],
        *,
        temperature: float = 0.0,
        seed: int = 0,
        deadline: float | None = None,
    ):
        import torch

        _check_schema(schema)
        self.model, self.table, self.schema = model, table, schema
        self.temperature = float(temperature)
        self.generator = torch.Generator().manual_seed(int(seed))
        self.deadline = deadline
        self._past: Any = None
        self._pending: list[int] = []
        # transformers 5 renamed ``past_key_values`` to ``cache`` (the old name warns)
        forward = inspect.signature(model.forward).parameters
        self._cache_kw = "cache" if "cache" in forward else "past_key_values"
        self._logits: Any = None
        self._out: list[str] = []
        self._string_mask: Any = None
        self.forward_passes = 0
        self.generated_tokens = 0
        self.prompt_tokens = 0

    # --- model plumbing ---------------------------------------------------------
    def _feed(self, ids: list[int]) -> None:
        """Queue tokens for the model; they are run in one forward pass when the next
        choice needs logits (literals and a closing token cost one pass together)."""
        self._pending.extend(ids)

    def _scores(self) -> Any:
        """The next-token logits after everything written so far."""
        import torch

        if self._pending:
            if self.deadline is not None and time.perf_counter() > self.deadline:
                raise DecodeTimeout("the answer was not finished in time")
            ids, self._pending = self._pending, []
            with torch.inference_mode():
                out = self.model(
                    input_ids=torch.tensor([ids]), use_cache=True, **{self._cache_kw: self._past}
                )
            cache = out.get("cache")
            self._past = cache if cache is not None else out.get("past_key_values")
            self._logits = out.logits[0, -1].float()
            self.forward_passes += 1
        return self._logits

    def _pick(self, allowed: list[int]) -> int:
        """The next token among ``allowed``: the most likely one, or a seeded sample."""
        if len(allowed) == 1:
            return allowed[0]
        return self._choose_token(allowed, self._scores())

    def _literal(self, text: str) -> None:
        self._out.append(text)
        self._feed(self.table.encode(text))

    # --- schema walk --------------------------------------------------------------
    def run(self, prompt_ids: list[int]) -> str:
        """Feed the prompt, then write the value; returns the JSON text."""
        self.prompt_tokens = len(prompt_ids)
        self._feed(prompt_ids)
        self._scores()  # the prompt alone: its pass is the long one
        self._value(self.schema)
        return "".join(self._out)

    def _value(self, schema: dict[str, Any], exclude: set[Any] | None = None) -> Any:
        if "anyOf" in schema:
            return self._variants(schema["anyOf"])
        if "const" in schema:
            self._literal(json.dumps(schema["const"]))
            return schema["const"]
        if "enum" in schema:
            options = [v for v in schema["enum"] if not exclude or v not in exclude]
            return self._choose(options)
        kind = schema.get("type")
        if kind == "object":
            return self._object(schema["properties"])
        if kind == "array":
            return self._array(schema)
        return self._string(int(schema.get("minLength", 0)), int(schema["maxLength"]))

    def _object(self, properties: dict[str, Any]) -> dict:
        self._literal("{")
        value = self._members(properties, {})
        self._literal("}")
        return value

    def _members(self, properties: dict[str, Any], value: dict[str, Any]) -> dict[str, Any]:
        """Write the properties not yet in ``value``, in order."""
        for name, sub in properties.items():
            if name in value:
                continue
            self._literal(f", {json.dumps(name)}: " if value else f"{json.dumps(name)}: ")
            value[name] = self._value(sub)
        return value

    def _variants(self, variants: list[dict[str, Any]]) -> dict:
        """Choose the first property's value among all variants, then write the rest of
        the variant that value belongs to."""
        key = next(iter(variants[0]["properties"]))
        owner: dict[Any, dict[str, Any]] = {}
        for variant in variants:
            sub = variant["properties"][key]
            for option in sub["enum"] if "enum" in sub else [sub["const"]]:
                owner.setdefault(option, variant)
        self._literal("{" + json.dumps(key) + ": ")
        chosen = self._choose(list(owner))
        value = self._members(owner[chosen]["properties"], {key: chosen})
        self._literal("}")
        return value

    def _array(self, schema: dict[str, Any]) -> list:
        low, high = int(schema.get("minItems", 1)), int(schema["maxItems"])
        distinct = schema.get("x-distinct")
        items: list[Any] = []
        seen: set[Any] = set()
        self._literal("[")
        while True:
            item = self._item(schema["items"], distinct, seen)
            items.append(item)
            if distinct and isinstance(item, dict):
                seen.add(item.get(distinct))
            if len(items) >= high:
                self._literal("]")
                return items
            if len(items) < low:
                self._literal(", ")
            elif self._choose([", ", "]"], raw=True) == "]":
                return items

    def _item(self, schema: dict[str, Any], distinct: str | None, seen: set[Any]) -> Any:
        if distinct and schema.get("type") == "object" and seen:
            properties = dict(schema["properties"])
            sub = dict(properties[distinct])
            sub["enum"] = [v for v in sub["enum"] if v not in seen]
            properties[distinct] = sub
            return self._value({**schema, "properties": properties})
        return self._value(schema)

    def _choose(self, options: list[Any], raw: bool = False) -> Any:
        """One of ``options`` (JSON values, or raw literal texts when ``raw``), walked
        token by token through the trie of their spellings."""
        if not options:
            raise SchemaError("an enum has no option left to choose")
        texts = [o if raw else json.dumps(o) for o in options]
        spellings = [self.table.encode(t) for t in texts]
        live = list(range(len(options)))
        prefix: list[int] = []
        while True:
            done = [i for i in live if len(spellings[i]) == len(prefix)]
            if done:
                chosen = done[0]
                break
            if len(live) == 1:
                rest = spellings[live[0]][len(prefix) :]
                self._feed(rest)
                prefix += rest
                chosen = live[0]
                break
            token = self._pick(sorted({spellings[i][len(prefix)] for i in live}))
            prefix.append(token)
            live = [i for i in live if spellings[i][len(prefix) - 1] == token]
            self.generated_tokens += 1
            self._feed([token])
        self._out.append(texts[chosen])
        return options[chosen]

    def _string(self, low: int, high: int) -> str:
        """A JSON string of ``low`` to ``high`` characters (``low`` counted without
        outer spaces, as the validator strips them).

        Two guards against a small model's habits: tokens already used in this string
        are penalised (as llama.cpp's repeat penalty does), which stops loops such as
        ``1.1.1.1``; and the string ends at the first sentence end once it is long
        enough, rather than running on to ``maxLength`` mid-sentence.
        """
        import torch

        table = self.table
        if self._string_mask is None:
            self._string_mask = torch.tensor(table.string_ok)
        candidates = self._string_mask
        self._literal('"')
        text = ""
        used: list[int] = []
        while len(text) < high:
            logits = self._scores().clone()
            if used:
                index = torch.tensor(sorted(set(used)))
                values = logits[index]
                logits[index] = torch.where(
                    values > 0, values / REPEAT_PENALTY, values * REPEAT_PENALTY
                )
            room = high - len(text)
            order = torch.argsort(logits[candidates], descending=True)
            allowed: list[int] = []
            for position in order[:64].tolist():
                token = int(candidates[position])
                piece = table.text[token] or ""
                if len(piece) <= room and (text.strip() or piece.strip()):
                    allowed.append(token)
                if len(allowed) >= 16:
                    break
            if len(text.strip()) >= low:
                allowed.append(table.quote)
            if not allowed:
                break
            token = self._choose_token(allowed, logits)
            self.generated_tokens += 1
            if token == table.quote:
                break
            used.append(token)
            text += table.text[token] or ""
            self._feed([token])
            if text.rstrip().endswith((".", "!", "?")) and len(text.strip()) >= max(low, high // 3):
                break
        text = text.strip()
        if len(text) < low:  # only when no token fitted: pad rather than break the schema
            text = (text + "." * low)[: max(low, len(text))]
        self._out.append(json.dumps(text, ensure_ascii=False)[1:])  # after the open quote
        self._feed([table.quote])
        return text

    def _choose_token(self, allowed: list[int], logits: Any) -> int:
        import torch

        scores = logits[torch.tensor(allowed)]
        if self.temperature <= 0:
            return allowed[int(torch.argmax(scores))]
        probs = torch.softmax(scores / self.temperature, dim=-1)
        return allowed[int(torch.multinomial(probs, 1, generator=self.generator))]


def _check_schema(schema: Any, path: str = "$") -> None:
    if not isinstance(schema, dict):
        raise SchemaError(f"{path}: a schema node must be an object")
    if "anyOf" in schema:
        variants = schema["anyOf"]
        if not variants or not all(
            isinstance(v, dict) and v.get("type") == "object" for v in variants
        ):
            raise SchemaError(f"{path}: anyOf is supported only over objects")
        keys = {next(iter(v.get("properties") or {"": None})) for v in variants}
        if len(keys) != 1:
            raise SchemaError(f"{path}: anyOf objects must share their first property")
        for index, variant in enumerate(variants):
            first = next(iter(variant["properties"].values()))
            if "enum" not in first and "const" not in first:
                raise SchemaError(
                    f"{path}.anyOf[{index}]: the first property must be an enum or const"
                )
            _check_schema(variant, f"{path}.anyOf[{index}]")
        return
    if "const" in schema:
        return
    if "enum" in schema:
        values = schema["enum"]
        if not values or not all(v is None or isinstance(v, str) for v in values):
            raise SchemaError(f"{path}: enum values must be strings or null")
        return
    kind = schema.get("type")
    if kind == "object":
        properties = schema.get("properties")
        if not isinstance(properties, dict) or not properties:
            raise SchemaError(f"{path}: an object needs 'properties'")
        for name, sub in properties.items():
            _check_schema(sub, f"{path}.{name}")
    elif kind == "array":
        if int(schema.get("minItems", 1)) < 1:
            raise SchemaError(f"{path}: minItems must be at least 1")
        if "maxItems" not in schema:
            raise SchemaError(f"{path}: an array needs 'maxItems' (an answer must end)")
        _check_schema(schema.get("items"), f"{path}[]")
        distinct = schema.get("x-distinct")
        if distinct is not None:
            items = schema["items"]
            if items.get("type") != "object" or "enum" not in items["properties"].get(distinct, {}):
                raise SchemaError(f"{path}: x-distinct must name an enum property of the items")
    elif kind == "string":
        if "maxLength" not in schema:
            raise SchemaError(f"{path}: a string needs 'maxLength' (an answer must end)")
    else:
        raise SchemaError(f"{path}: type {kind!r} is not supported")


def decode_json(
    model: Any,
    table: TokenTable,
    prompt_ids: list[int],
    schema: dict[str, Any],
    **options: Any,
) -> tuple[str, ConstrainedDecoder]:
    """The JSON text the model writes for ``schema`` after ``prompt_ids``, and the
    decoder (for its counters)."""
    decoder = ConstrainedDecoder(model, table, schema, **options)
    return decoder.run(prompt_ids), decoder
