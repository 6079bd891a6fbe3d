# SPDX-License-Identifier: GPL-2.0-only
"""Read a ``.litmus`` test in herd7's C format (the subset the kernel's tests use) into a syntax tree.

The kernel's ``tools/memory-model/litmus-tests/*.litmus`` are written as::

    C MP+pooncerelease+poacquireonce        <- the test's name
    (* Result: Never ... *)                  <- LKMM's verdict, in the header comment
    { int *p=y; int x; spinlock_t l; }       <- initial values (0 unless given)
    P0(int *buf, int *flag) { ... }          <- one function per thread: C statements
    locations [0:r1; x]                      <- herd's debug aid (parsed, not used)
    filter (0:r0=1)                          <- only runs whose final state passes count
    exists (1:r0=1 /\\ 1:r1=0)               <- the final state asked about (or ~exists, forall)

This module only reads the text: which calls exist and what they mean is
``checker.litmus.lower``'s business. Every mistake is a ``SpecError`` naming
the file, the line and what was expected (exit 2 through the command line).
Comments are herd's ``(* ... *)`` (nested) and C's ``//`` and ``/* */``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Union

from checker.errors import SpecError

#: Words that start a declaration (a type), in the init block and in thread bodies.
TYPE_WORDS = frozenset({"int", "long", "unsigned", "signed", "char", "short", "intptr_t", "uintptr_t",
                        "atomic_t", "atomic_long_t", "spinlock_t", "struct", "const", "volatile"})
#: C statements herd accepts that these tests do not use and this subset does not read.
UNSUPPORTED_STATEMENTS = {"while": "loops", "for": "loops", "do": "loops", "goto": "goto", "switch": "switch",
                          "return": "return", "break": "break", "continue": "continue"}


# ---- the tree -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Num:
    """An integer literal."""
    value: int
    line: int


@dataclass(frozen=True)
class Name:
    """A register of the thread, or a parameter / location (whose value is its address)."""
    name: str
    line: int


@dataclass(frozen=True)
class Deref:
    """``*pointer``: a plain access to the location it points to."""
    pointer: "Expr"
    line: int


@dataclass(frozen=True)
class AddrOf:
    """``&name``"""
    name: str
    line: int


@dataclass(frozen=True)
class Unary:
    """A unary operation: ``!``, ``-`` or ``~``."""
    op: str  # "!", "-", "~"
    operand: "Expr"
    line: int


@dataclass(frozen=True)
class Binary:
    """A binary operation of C's expression syntax."""
    op: str  # "==", "!=", "<", ">", "<=", ">=", "+", "-", "*", "/", "%", "&&", "||", "&", "|", "^"
    left: "Expr"
    right: "Expr"
    line: int


@dataclass(frozen=True)
class Call:
    """A call of a kernel primitive (``READ_ONCE``, ``smp_mb``, ``spin_lock``, ...)."""
    fn: str
    args: tuple["Expr", ...]
    line: int


Expr = Union[Num, Name, Deref, AddrOf, Unary, Binary, Call]


@dataclass(frozen=True)
class Decl:
    """``int r0;`` or ``int r0 = expr;`` (one per declarator)."""
    name: str
    pointer: bool
    init: Expr | None
    line: int


@dataclass(frozen=True)
class Assign:
    """``target = value;`` where target is a register or ``*pointer``."""
    target: Expr
    value: Expr
    line: int


@dataclass(frozen=True)
class ExprStmt:
    """A call for its effect: ``WRITE_ONCE(*x, 1);``, ``smp_mb();``"""
    expr: Expr
    line: int


@dataclass(frozen=True)
class If:
    """An if statement, with its else branch (empty when there is none)."""
    cond: Expr
    then: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...]
    line: int


Stmt = Union[Decl, Assign, ExprStmt, If]


@dataclass(frozen=True)
class Param:
    """A thread parameter: a pointer to a shared location."""
    type: str  # "int", "spinlock_t", ...
    stars: int  # 1 for ``int *x``, 2 for ``int **p``
    name: str
    line: int


@dataclass(frozen=True)
class Thread:
    """One thread ``Pn`` of a litmus test: its parameters and its statements."""
    index: int  # the n of Pn
    params: tuple[Param, ...]
    body: tuple[Stmt, ...]
    line: int


@dataclass(frozen=True)
class InitItem:
    """One entry of the ``{ ... }`` block: a location (or ``thread:register``) and its initial value."""
    thread: int | None  # set for ``0:r0=1``
    name: str
    type: str | None  # "int", "spinlock_t", ... when declared
    pointer: bool  # declared ``int *p``
    value: int | str | None  # an int, a location name (its address), or None (0)
    line: int


@dataclass(frozen=True)
class Atom:
    """``0:r0=1``, ``x=2``, ``1:r0=x`` (a location's address); ``negated`` for ``!=``."""
    thread: int | None
    name: str
    value: int | str
    negated: bool
    line: int


@dataclass(frozen=True)
class Not:
    """A negated condition of the exists clause."""
    operand: "Cond"
    line: int


@dataclass(frozen=True)
class And:
    """A conjunction in the exists clause."""
    parts: tuple["Cond", ...]
    line: int


@dataclass(frozen=True)
class Or:
    """A disjunction in the exists clause."""
    parts: tuple["Cond", ...]
    line: int


@dataclass(frozen=True)
class Const:
    """``true`` or ``false`` in the exists clause."""
    value: bool
    line: int


Cond = Union[Atom, Not, And, Or, Const]


@dataclass(frozen=True)
class Litmus:
    """One test: its name, LKMM's stated result, init, threads and final-state clauses."""
    name: str
    file: str
    result: str | None  # "Never", "Sometimes", "Always" (or herd's "DEADLOCK") from the header's ``Result:``
    init: tuple[InitItem, ...]
    threads: tuple[Thread, ...]
    quantifier: str  # "exists", "~exists" or "forall"
    condition: Cond
    filter: Cond | None = None
    locations: tuple[tuple[int | None, str], ...] = ()
    comment: str = field(default="", compare=False)  # the header comment, as written
    source: str = field(default="", compare=False, repr=False)  # the whole text, for quoting its lines


# ---- tokens ---------------------------------------------------------------------------------------------

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\f\v]+) | (?P<nl>\n)
  | (?P<num>0[xX][0-9a-fA-F]+|[0-9]+)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>/\\|\\/|==|!=|<=|>=|&&|\|\||->|[{}()\[\];,=*&!<>+\-~:.%/|^?])
""", re.VERBOSE)


@dataclass(frozen=True)
class Tok:
    """A token, with its line."""
    kind: str  # num, name, op, end
    text: str
    line: int


def _strip_comments(text: str, file: str, first_line: int) -> tuple[str, list[str]]:
    """The text with every comment blanked (newlines kept, so lines still count), and herd's comments."""
    out: list[str] = []
    comments: list[str] = []
    i, n, line, depth_braces = 0, len(text), first_line, 0
    while i < n:
        c = text[i]
        # herd reads (* *) only outside braces: inside a thread, READ_ONCE(*x) is C
        if depth_braces == 0 and text.startswith("(*", i):
            start, depth, j = line, 0, i
            while j < n:
                if text.startswith("(*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*)", j):
                    depth, j = depth - 1, j + 2
                    if depth == 0:
                        break
                else:
                    j += 1
            else:
                raise SpecError("a comment opened with '(*' is never closed with '*)'", file=file, line=start)
            body = text[i:j]
            comments.append(body)
            line += body.count("\n")
            out.append("".join("\n" if ch == "\n" else " " for ch in body))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise SpecError("a comment opened with '/*' is never closed with '*/'", file=file, line=line)
            body = text[i:j + 2]
            line += body.count("\n")
            out.append("".join("\n" if ch == "\n" else " " for ch in body))
            i = j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        else:
            if c == "\n":
                line += 1
            depth_braces += {"{": 1, "}": -1}.get(c, 0)
            out.append(c)
            i += 1
    return "".join(out), comments


def _tokens(text: str, file: str, first_line: int) -> list[Tok]:
    toks: list[Tok] = []
    pos, line = 0, first_line
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise SpecError(f"unexpected character {text[pos]!r}", file=file, line=line)
        kind = m.lastgroup
        if kind == "nl":
            line += 1
        elif kind != "ws":
            toks.append(Tok(kind, m.group(), line))
        pos = m.end()
    toks.append(Tok("end", "end of file", toks[-1].line if toks else line))  # where the text stops
    return toks


def _show(t: Tok) -> str:
    return t.text if t.kind == "end" else repr(t.text)


# ---- the parser -----------------------------------------------------------------------------------------

class _Parser:
    def __init__(self, toks: list[Tok], file: str):
        self.toks = toks
        self.i = 0
        self.file = file

    # -- helpers
    @property
    def tok(self) -> Tok:
        return self.toks[self.i]

    def peek(self, k: int = 1) -> Tok:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def error(self, message: str, line: int | None = None) -> SpecError:
        return SpecError(message, file=self.file, line=line if line is not None else self.tok.line)

    def at(self, text: str) -> bool:
        return self.tok.kind in ("op", "name") and self.tok.text == text

    def take(self, text: str, what: str) -> Tok:
        if not self.at(text):
            raise self.error(f"expected {text!r} {what}, found {_show(self.tok)}")
        t = self.tok
        self.i += 1
        return t

    def take_name(self, what: str) -> Tok:
        if self.tok.kind != "name":
            raise self.error(f"expected {what}, found {_show(self.tok)}")
        t = self.tok
        self.i += 1
        return t

    def take_int(self, what: str) -> int:
        neg = self.at("-")
        if neg:
            self.i += 1
        if self.tok.kind != "num":
            raise self.error(f"expected {what}, found {_show(self.tok)}")
        v = int(self.tok.text, 0)
        self.i += 1
        return -v if neg else v

    # -- top level
    def litmus(self, name: str, result: str | None, comment: str, source: str) -> Litmus:
        init: tuple[InitItem, ...] = ()
        if self.at("{"):
            init = self.init_block()
        threads: list[Thread] = []
        while self.tok.kind == "name" and re.fullmatch(r"P[0-9]+", self.tok.text):
            threads.append(self.thread(len(threads)))
        if not threads:
            raise self.error(f"expected a thread P0(...) {{ ... }}, found {_show(self.tok)}")
        locations: list[tuple[int | None, str]] = []
        filt: Cond | None = None
        quantifier, cond = None, None
        while self.tok.kind != "end":
            if self.at("locations"):
                self.i += 1
                locations.extend(self.locations())
            elif self.at("filter"):
                self.i += 1
                filt = self.condition()
            elif self.at("exists") or self.at("forall"):
                if quantifier is not None:
                    raise self.error("a second final-state clause: a test has one exists, ~exists or forall")
                quantifier = self.tok.text
                self.i += 1
                cond = self.condition()
            elif self.at("~") and self.peek().text == "exists":
                if quantifier is not None:
                    raise self.error("a second final-state clause: a test has one exists, ~exists or forall")
                self.i += 2
                quantifier, cond = "~exists", self.condition()
            else:
                raise self.error(f"expected locations, filter, exists, ~exists or forall after the threads, found "
                                 f"{_show(self.tok)}")
        if quantifier is None or cond is None:
            raise self.error("no final-state clause: end the test with exists (...), ~exists (...) or forall (...)")
        return Litmus(name, self.file, result, init, tuple(threads), quantifier, cond, filt, tuple(locations),
                      comment, source)

    def init_block(self) -> tuple[InitItem, ...]:
        self.take("{", "to open the init block")
        items: list[InitItem] = []
        while not self.at("}"):
            if self.tok.kind == "end":
                raise self.error("the init block '{' is never closed with '}'")
            if self.at(";"):
                self.i += 1
                continue
            items.append(self.init_item())
            if not self.at("}"):
                self.take(";", "after an init entry")
        self.i += 1
        return tuple(items)

    def init_item(self) -> InitItem:
        line = self.tok.line
        if self.tok.kind == "num" and self.peek().text == ":":  # 0:r0=1
            thread = int(self.tok.text)
            self.i += 2
            reg = self.take_name("a register after 'N:'").text
            self.take("=", f"after {thread}:{reg}")
            return InitItem(thread, reg, None, False, self.init_value(), line)
        type_ = None
        if self.tok.text in TYPE_WORDS:
            type_ = self.type_words()
        pointer = False
        while self.at("*"):
            pointer = True
            self.i += 1
        name = self.take_name("a location name in the init block").text
        value: int | str | None = None
        if self.at("="):
            self.i += 1
            value = self.init_value()
        return InitItem(None, name, type_, pointer, value, line)

    def init_value(self) -> int | str:
        if self.at("&"):
            self.i += 1
            return self.take_name("a location after '&'").text
        if self.tok.kind == "name":
            if self.tok.text == "ATOMIC_INIT" and self.peek().text == "(":
                self.i += 2
                v = self.take_int("an integer in ATOMIC_INIT(...)")
                self.take(")", "to close ATOMIC_INIT(")
                return v
            t = self.take_name("a value")
            return t.text
        return self.take_int("an integer, a location or &location as the initial value")

    def type_words(self) -> str:
        words = []
        while self.tok.kind == "name" and self.tok.text in TYPE_WORDS:
            words.append(self.tok.text)
            self.i += 1
            if words[-1] == "struct":
                words.append(self.take_name("a struct name").text)
        return " ".join(w for w in words if w not in ("const", "volatile"))

    def thread(self, expected: int) -> Thread:
        t = self.tok
        index = int(t.text[1:])
        if index != expected:
            raise self.error(f"threads are numbered from P0 in order: expected P{expected}, found {t.text}")
        self.i += 1
        self.take("(", f"after {t.text}")
        params: list[Param] = []
        while not self.at(")"):
            pl = self.tok.line
            if self.tok.text not in TYPE_WORDS:
                raise self.error(f"expected a parameter such as 'int *x' in {t.text}(...), found {_show(self.tok)}")
            type_ = self.type_words()
            stars = 0
            while self.at("*"):
                stars += 1
                self.i += 1
            name = self.take_name(f"a parameter name in {t.text}(...)").text
            if stars == 0:
                raise self.error(f"{t.text}'s parameter {name} is not a pointer: a thread's parameters are the "
                                 f"shared locations, e.g. 'int *{name}'", pl)
            params.append(Param(type_, stars, name, pl))
            if not self.at(")"):
                self.take(",", f"between {t.text}'s parameters")
        self.i += 1
        body = self.block(f"{t.text}'s body")
        return Thread(index, tuple(params), body, t.line)

    def block(self, what: str) -> tuple[Stmt, ...]:
        self.take("{", f"to open {what}")
        stmts: list[Stmt] = []
        while not self.at("}"):
            if self.tok.kind == "end":
                raise self.error(f"{what} is never closed with '}}'")
            stmts.extend(self.statement())
        self.i += 1
        return tuple(stmts)

    def statement(self) -> list[Stmt]:
        t = self.tok
        if t.kind == "name" and t.text in UNSUPPORTED_STATEMENTS:
            raise self.error(f"'{t.text}' ({UNSUPPORTED_STATEMENTS[t.text]}) is not in the litmus subset read here: "
                             f"straight-line code, if/else, and the kernel's ordering primitives")
        if self.at(";"):
            self.i += 1
            return []
        if self.at("{"):
            return list(self.block("a block"))
        if self.at("if"):
            self.i += 1
            self.take("(", "after if")
            cond = self.expr()
            self.take(")", "to close the if condition")
            then = tuple(self.statement())
            orelse: tuple[Stmt, ...] = ()
            if self.at("else"):
                self.i += 1
                orelse = tuple(self.statement())
            return [If(cond, then, orelse, t.line)]
        if t.kind == "name" and t.text in TYPE_WORDS:
            return self.declaration()
        e = self.expr()
        if self.at("="):
            self.i += 1
            if not isinstance(e, (Name, Deref)):
                raise self.error("the left of '=' must be a register or *pointer", t.line)
            v = self.expr()
            self.take(";", "after the assignment")
            return [Assign(e, v, t.line)]
        self.take(";", "after the statement")
        if not isinstance(e, Call):
            raise self.error("a statement that is not a call or an assignment has no effect", t.line)
        return [ExprStmt(e, t.line)]

    def declaration(self) -> list[Stmt]:
        self.type_words()
        out: list[Stmt] = []
        while True:
            line = self.tok.line
            pointer = False
            while self.at("*"):
                pointer = True
                self.i += 1
            name = self.take_name("a register name in the declaration").text
            init = None
            if self.at("="):
                self.i += 1
                init = self.expr()
            out.append(Decl(name, pointer, init, line))
            if self.at(","):
                self.i += 1
                continue
            self.take(";", "after the declaration")
            return out

    # -- C expressions, by precedence (lowest first)
    _LEVELS = (("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">="), ("+", "-"),
               ("*", "/", "%"))

    def expr(self, level: int = 0) -> Expr:
        if level == len(self._LEVELS):
            return self.unary()
        left = self.expr(level + 1)
        while self.tok.kind == "op" and self.tok.text in self._LEVELS[level]:
            op = self.tok
            self.i += 1
            left = Binary(op.text, left, self.expr(level + 1), op.line)
        return left

    def unary(self) -> Expr:
        t = self.tok
        if self.at("*"):
            self.i += 1
            return Deref(self.unary(), t.line)
        if self.at("&"):
            self.i += 1
            return AddrOf(self.take_name("a location after '&'").text, t.line)
        if t.kind == "op" and t.text in ("!", "-", "~"):
            self.i += 1
            return Unary(t.text, self.unary(), t.line)
        if self.at("(") and self.peek().kind == "name" and self.peek().text in TYPE_WORDS | {"void"}:
            self.i += 1  # a cast, (void)atomic_add_unless(...) or (int)r0: values here are untyped ints
            while not self.at(")"):
                if self.tok.kind == "end" or not (self.at("*") or self.tok.text in TYPE_WORDS | {"void"}):
                    raise self.error(f"expected a type and ')' in the cast, found {_show(self.tok)}")
                self.i += 1
            self.i += 1
            return self.unary()
        return self.primary()

    def primary(self) -> Expr:
        t = self.tok
        if t.kind == "num":
            self.i += 1
            return Num(int(t.text, 0), t.line)
        if self.at("("):
            self.i += 1
            e = self.expr()
            self.take(")", "to close '('")
            return e
        if t.kind == "name":
            self.i += 1
            if self.at("("):
                self.i += 1
                args: list[Expr] = []
                while not self.at(")"):
                    args.append(self.expr())
                    if not self.at(")"):
                        self.take(",", f"between the arguments of {t.text}()")
                self.i += 1
                return Call(t.text, tuple(args), t.line)
            if self.at("->") or self.at("[") or self.at("."):
                raise self.error(f"'{self.tok.text}' (struct fields, arrays) is not in the litmus subset read here")
            return Name(t.text, t.line)
        raise self.error(f"expected an expression, found {_show(t)}")

    # -- herd's final-state language
    def locations(self) -> list[tuple[int | None, str]]:
        self.take("[", "after locations")
        out = []
        while not self.at("]"):
            thread, name = self.location("in locations [...]")
            out.append((thread, name))
            if not self.at("]"):
                self.take(";", "between the entries of locations [...]")
        self.i += 1
        return out

    def location(self, what: str) -> tuple[int | None, str]:
        if self.tok.kind == "num" and self.peek().text == ":":
            thread = int(self.tok.text)
            self.i += 2
            return thread, self.take_name(f"a register after '{thread}:' {what}").text
        if self.at("*"):  # herd's *x: the location x itself
            self.i += 1
        return None, self.take_name(f"a register N:rK or a location {what}").text

    def condition(self) -> Cond:
        line = self.tok.line
        parts = [self.conjunction()]
        while self.at("\\/"):
            self.i += 1
            parts.append(self.conjunction())
        return parts[0] if len(parts) == 1 else Or(tuple(parts), line)

    def conjunction(self) -> Cond:
        line = self.tok.line
        parts = [self.cond_atom()]
        while self.at("/\\"):
            self.i += 1
            parts.append(self.cond_atom())
        return parts[0] if len(parts) == 1 else And(tuple(parts), line)

    def cond_atom(self) -> Cond:
        t = self.tok
        if self.at("~") or self.at("not"):
            self.i += 1
            return Not(self.cond_atom(), t.line)
        if self.at("("):
            self.i += 1
            c = self.condition()
            self.take(")", "to close '(' in the condition")
            return c
        if self.at("true") or self.at("false"):
            self.i += 1
            return Const(t.text == "true", t.line)
        thread, name = self.location("in the condition")
        if self.at("="):
            negated = False
        elif self.at("!="):
            negated = True
        else:
            raise self.error(f"expected '=' or '!=' after {name} in the condition, found {_show(self.tok)}")
        self.i += 1
        value: int | str
        if self.tok.kind == "name":
            value = self.take_name("a value").text
        else:
            value = self.take_int("an integer or a location after '='")
        return Atom(thread, name, value, negated, t.line)


_RESULT = re.compile(r"Result:\s*(Never|Sometimes|Always|DEADLOCK)\b")


def parse_text(text: str, file: str = "<litmus>") -> Litmus:
    """The test in ``text``; ``file`` names it in errors."""
    lines = text.split("\n")
    first = next((k for k, ln in enumerate(lines) if ln.strip()), None)
    if first is None:
        raise SpecError("empty file: a litmus test starts with 'C <name>'", file=file, line=1)
    head = lines[first].split()
    if head[0] != "C" or len(head) < 2:
        what = "the kernel's tests are in C: 'C <name>'" if head[0] != "C" else "'C' needs the test's name"
        raise SpecError(f"the first line must be 'C <name>' ({what}), found {lines[first].strip()!r}",
                        file=file, line=first + 1)
    name = head[1]
    rest = "\n".join(lines[first + 1:])
    body, comments = _strip_comments(rest, file, first + 2)
    header = comments[0] if comments else ""
    m = _RESULT.search(header)
    p = _Parser(_tokens(body, file, first + 2), file)
    return p.litmus(name, m.group(1) if m else None, header, text)


def parse_file(path: str | Path) -> Litmus:
    """Read and parse one ``.litmus`` file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError("no such litmus file (give a path to a .litmus file)", file=str(p)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise SpecError(f"cannot read it: {getattr(e, 'strerror', None) or e}", file=str(p)) from None
    return parse_text(text, str(p))
