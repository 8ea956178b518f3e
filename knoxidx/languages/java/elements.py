"""The elements of the JDK's collections, streams and optionals: a collection's element type
as declared, an element of an array read by index, and the JDK methods that pass a lambda
each element, keep the receiver's elements or return one of its type arguments."""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

from knoxidx.core.facts import NamePath
from knoxidx.parse.name_paths import indexed_path, split_top_level

if TYPE_CHECKING:
    from collections.abc import Mapping


# JDK (and javac's own) collections, streams and optionals: their one type argument is their
# elements' type (a map's two are not)
_COLLECTIONS = frozenset({
    "Iterable", "Collection", "List", "ArrayList", "LinkedList", "Set", "HashSet",
    "LinkedHashSet", "TreeSet", "SortedSet", "NavigableSet", "EnumSet", "Queue", "Deque",
    "ArrayDeque", "PriorityQueue", "Stack", "Vector", "Stream", "Optional", "Iterator",
    "ListIterator", "Spliterator", "ListBuffer", "CopyOnWriteArrayList"})
# a collection's or stream's own methods (outside the index) whose function argument is passed
# each element (`xs.forEach(x -> ..)`, a comparator's first parameter too)
ELEMENT_CALLBACKS = frozenset({
    "forEach", "forEachOrdered", "forEachRemaining", "filter", "map", "mapToInt", "mapToLong",
    "mapToDouble", "mapToObj", "flatMap", "anyMatch", "allMatch", "noneMatch", "peek",
    "removeIf", "takeWhile", "dropWhile", "ifPresent", "ifPresentOrElse", "sort", "sorted",
    "min", "max", "reduce"})
# ... and those that give a stream or a collection of the receiver's own elements
ELEMENTS_KEPT = frozenset({
    "stream", "parallelStream", "filter", "sorted", "distinct", "limit", "skip", "peek",
    "parallel", "sequential", "unordered", "iterator", "reversed"})
# JDK types' methods that return one of the receiver's type arguments: a map's value, an
# entry's key or value, a list's, a queue's or an optional's element (`e.getValue().run()`)
_MAPS = ("Map", "HashMap", "LinkedHashMap", "TreeMap", "SortedMap", "NavigableMap", "EnumMap",
         "WeakHashMap", "IdentityHashMap", "Hashtable", "ConcurrentMap", "ConcurrentHashMap")
_MAP_VALUES = ("get", "getOrDefault", "put", "putIfAbsent", "computeIfAbsent",
               "computeIfPresent", "compute", "merge", "replace")
_HOLDERS = ("List", "ArrayList", "LinkedList", "Vector", "Stack", "Queue", "Deque",
            "ArrayDeque", "PriorityQueue", "Iterator", "ListIterator", "Optional", "Supplier",
            "SortedSet", "NavigableSet", "TreeSet", "CopyOnWriteArrayList")
_HELD = ("get", "getFirst", "getLast", "removeFirst", "removeLast", "peek", "peekFirst",
         "peekLast", "poll", "pollFirst", "pollLast", "pop", "element", "first", "last", "next",
         "previous", "orElse", "orElseGet", "orElseThrow")
ARGUMENT_RESULTS: Mapping[tuple[str, str], int] = MappingProxyType({
    **{(m, method): 1 for m in _MAPS for method in _MAP_VALUES},
    **{(h, method): 0 for h in _HOLDERS for method in _HELD},
    ("Entry", "getKey"): 0, ("Entry", "getValue"): 1})


def indexed_receiver(text: str) -> NamePath:
    """The path of a member read on an element of an array (`addrs[i].getHostName`: ("addrs",
    "[]", "getHostName"), see name_paths.indexed_path); () where none is read."""
    return indexed_path(text) if "[" in text else ()


def element_type(declared: str) -> str:
    """The type of the elements of the collection, stream or optional ``declared`` (a type as
    written, or a field's whole declaration): its one type argument, or an array's element
    type (`InetAddress[] addrs;`), "" where not known."""
    head = declared.partition("=")[0]
    array = next((w for w in head.split() if w.endswith("[]") and "<" not in w), "")
    if array and array.count("[") == 1 and not array.startswith("@"):
        return array[:-2]
    end = head.rfind(">")
    depth, start = 0, -1
    for at in range(end, -1, -1):
        if head[at] == ">":
            depth += 1
        elif head[at] == "<":
            depth -= 1
            if depth == 0:
                start = at
                break
    if start <= 0:
        return ""
    words = head[:start].split()
    if not words or words[-1].rpartition(".")[2] not in _COLLECTIONS:
        return ""
    arguments = split_top_level(head[start + 1 : end])
    if len(arguments) != 1:
        return ""
    words = [w for w in arguments[0].split() if not w.startswith("@")]
    if words and words[0] == "?":  # `? extends T`: a T; `? super T`: not known
        words = words[2:] if len(words) > 2 and words[1] == "extends" else []
    return "".join(words)
