"""What the index knows of the JDK without indexing it: the classes of java.lang, which every
file imports; the methods of Object and the commonest JDK types, looked for on no receiver of
the index; primitive types, their boxes and widening; the JDK's collections and the supertypes
of the JDK types an index's classes extend."""

from __future__ import annotations

# the methods of Object and of the commonest JDK types (see BaseRules.builtin_method_names)
OBJECT_METHODS = frozenset(["equals", "hashCode", "toString", "getClass", "notify", "notifyAll", "wait", "clone", "finalize", "length", "charAt", "substring", "indexOf", "isEmpty", "get", "put", "add", "addAll", "remove", "contains", "containsKey", "size", "iterator", "stream", "forEach", "map", "filter", "collect", "append", "format", "valueOf", "of", "asList", "keySet", "values", "entrySet", "close", "read", "write", "flush", "println", "print", "trim", "split", "replace", "startsWith", "endsWith", "toLowerCase", "toUpperCase", "compareTo", "next", "hasNext", "getKey", "getValue", "orElse", "isPresent", "ifPresent"])


PRIMITIVES = frozenset({"int", "long", "short", "byte", "char", "boolean", "float", "double"})
# what a value of a primitive type can be passed as without a cast (no narrowing in a call)
WIDENS = {
    "byte": frozenset({"byte", "short", "int", "long", "float", "double"}),
    "short": frozenset({"short", "int", "long", "float", "double"}),
    "char": frozenset({"char", "int", "long", "float", "double"}),
    "int": frozenset({"int", "long", "float", "double"}),
    "long": frozenset({"long", "float", "double"}),
    "float": frozenset({"float", "double"}),
    "double": frozenset({"double"}),
    "boolean": frozenset({"boolean"}),
}
BOXES = {"byte": "Byte", "short": "Short", "char": "Character", "int": "Integer",
         "long": "Long", "float": "Float", "double": "Double", "boolean": "Boolean"}
UNBOXES = {box: primitive for primitive, box in BOXES.items()}
# supertypes of every boxed primitive and of String, besides their own
VALUE_SUPERS = frozenset({"Object", "Serializable", "Comparable", "Constable", "ConstantDesc"})
STRING_SUPERS = VALUE_SUPERS | {"String", "CharSequence"}
NUMBER_SUPERS = VALUE_SUPERS | {"Number"}
# final classes of java.lang: no class of an index extends them
FINAL_LANG = frozenset({"String", "Class", *UNBOXES})


# types of java.lang no lambda can be passed as: neither functional interfaces nor Object
NOT_FUNCTIONAL = frozenset({"Object", "String", "CharSequence", "Number", "Serializable",
                            *UNBOXES})


# The JDK's collection and map types: a JDK type of another name is none of them (javax.tools'
# `Location` is no `Collection`); `Iterable` is left out, which JDK types of many names are
JDK_COLLECTIONS = frozenset({
    "Collection", "List", "Set", "SortedSet", "NavigableSet", "Queue", "Deque", "Map",
    "SortedMap", "NavigableMap", "ArrayList", "LinkedList", "HashSet", "LinkedHashSet",
    "TreeSet", "EnumSet", "ArrayDeque", "PriorityQueue", "Stack", "Vector", "HashMap",
    "LinkedHashMap", "TreeMap", "EnumMap", "IdentityHashMap", "WeakHashMap", "Hashtable",
    "Properties", "AbstractCollection", "AbstractList", "AbstractSet", "AbstractMap",
    "AbstractQueue", "AbstractSequentialList", "CopyOnWriteArrayList", "CopyOnWriteArraySet",
    "ConcurrentMap", "ConcurrentHashMap", "ConcurrentNavigableMap", "ConcurrentSkipListMap",
    "ConcurrentSkipListSet", "ConcurrentLinkedQueue", "ConcurrentLinkedDeque", "BlockingQueue",
    "BlockingDeque", "LinkedBlockingQueue", "LinkedBlockingDeque", "ArrayBlockingQueue",
    "PriorityBlockingQueue", "DelayQueue", "SynchronousQueue", "TransferQueue",
    "LinkedTransferQueue", "Bindings", "SimpleBindings", "Attributes"})
JDK_PACKAGES = ("java.", "javax.")


# JDK types a class of an index extends or implements, with every supertype of theirs but
# Object: through one of them a class is of those types only (`JCTree implements Cloneable`
# is no Iterable)
JDK_SUPERTYPES: dict[str, frozenset[str]] = {
    "Object": frozenset(), "Cloneable": frozenset(), "Serializable": frozenset(),
    "Comparable": frozenset(), "Runnable": frozenset(), "AutoCloseable": frozenset(),
    "Closeable": frozenset({"AutoCloseable"}), "CharSequence": frozenset(),
    "Iterable": frozenset(), "Iterator": frozenset(), "Comparator": frozenset(),
    "Throwable": frozenset({"Serializable"}),
    "Exception": frozenset({"Throwable", "Serializable"}),
    "Error": frozenset({"Throwable", "Serializable"}),
    "RuntimeException": frozenset({"Exception", "Throwable", "Serializable"}),
}


def looks_like_class(name: str) -> bool:
    """Named as classes are by convention (`TypeElement`), not as constants (`MAX`) or type
    variables (`T`)."""
    return name[:1].isupper() and any(c.islower() for c in name)


# The public classes and interfaces of java.lang, which every file imports by their simple names
JAVA_LANG = frozenset({
    "AbstractMethodError", "Appendable", "ArithmeticException",
    "ArrayIndexOutOfBoundsException", "ArrayStoreException", "AssertionError", "AutoCloseable",
    "Boolean", "BootstrapMethodError", "Byte", "CharSequence", "Character", "Class",
    "ClassCastException", "ClassCircularityError", "ClassFormatError", "ClassLoader",
    "ClassNotFoundException", "ClassValue", "CloneNotSupportedException", "Cloneable",
    "Comparable", "Deprecated", "Double", "Enum", "EnumConstantNotPresentException", "Error",
    "Exception", "ExceptionInInitializerError", "Float", "FunctionalInterface",
    "IllegalAccessError", "IllegalAccessException", "IllegalArgumentException",
    "IllegalCallerException", "IllegalMonitorStateException", "IllegalStateException",
    "IllegalThreadStateException", "IncompatibleClassChangeError", "IndexOutOfBoundsException",
    "InheritableThreadLocal", "InstantiationError", "InstantiationException", "Integer",
    "InternalError", "InterruptedException", "Iterable", "LayerInstantiationException",
    "LinkageError", "Long", "Math", "Module", "ModuleLayer", "NegativeArraySizeException",
    "NoClassDefFoundError", "NoSuchFieldError", "NoSuchFieldException", "NoSuchMethodError",
    "NoSuchMethodException", "NullPointerException", "Number", "NumberFormatException",
    "Object", "OutOfMemoryError", "Override", "Package", "Process", "ProcessBuilder",
    "ProcessHandle", "Readable", "Record", "ReflectiveOperationException", "Runnable",
    "Runtime", "RuntimeException", "RuntimePermission", "SafeVarargs", "SecurityException",
    "SecurityManager", "Short", "StackOverflowError", "StackTraceElement", "StackWalker",
    "StrictMath", "String", "StringBuffer", "StringBuilder", "StringIndexOutOfBoundsException",
    "SuppressWarnings", "System", "Thread", "ThreadDeath", "ThreadGroup", "ThreadLocal",
    "Throwable", "TypeNotPresentException", "UnknownError", "UnsatisfiedLinkError",
    "UnsupportedClassVersionError", "UnsupportedOperationException", "VerifyError",
    "VirtualMachineError", "Void"})
