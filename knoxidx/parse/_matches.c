/* knoxidx.parse._matches: the tags query's matches for extraction, without a Python object
 * per capture where extraction needs none.
 *
 * py-tree-sitter's QueryCursor.matches() builds, for every match, a tuple, a dict, a str per
 * capture name, a list per capture and a Node per captured node; extraction then reads most
 * of them only for a byte range and a position. Here a reference pattern's match is one
 * tuple of ints (its sort key, span, kind, position and receiver's span) and a local name's a
 * (start, end) pair; every other match comes as py-tree-sitter's (pattern, {name: [Node]}).
 *
 * It runs tree-sitter's own query cursor, compiled here from the C library in the source
 * distribution of the very py-tree-sitter version installed (setup.py), over the Query and
 * the tree that py-tree-sitter made: it reads their objects' first fields (the layout of
 * tree_sitter/binding/types.h), which is why knoxidx.indexer.native uses it only with the
 * version it was built against. Text predicates (#eq?, #not-eq?, #match?, #not-match?) are
 * evaluated here on the source bytes; a query with any other predicate is refused (plan()
 * raises ValueError), and extraction runs py-tree-sitter's matches() for it.
 *
 * A failed allocation of Python's (a parse worker near its memory cap) raises MemoryError
 * and releases what the call holds: every result is checked, none is stored unchecked.
 * tree-sitter's own allocations (the query cursor's) abort the process instead, as they do
 * in py-tree-sitter; the pool records that worker's file as failed.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#include <tree_sitter/api.h>

/* py-tree-sitter's objects, as far as they are read here */
typedef struct {
    PyObject_HEAD
    TSNode node;
    PyObject *children;
    PyObject *tree;
} NodeObject;

typedef struct {
    PyObject_HEAD
    TSQuery *query;
} QueryObject;

enum { MODE_NODES = 0, MODE_REF = 1, MODE_SPAN = 2 };
enum { OP_EQ, OP_NOT_EQ, OP_MATCH, OP_NOT_MATCH };

typedef struct {
    int op;
    uint32_t capture;
    int64_t other;   /* the second capture of a capture-to-capture #eq?, else -1 */
    PyObject *value; /* bytes to compare with, or a compiled regex's bound `search` */
} Predicate;

typedef struct {
    PyObject *query; /* the py-tree-sitter Query, kept alive with its TSQuery */
    TSQuery *ts;
    uint32_t patterns, captures;
    uint8_t *modes;
    uint8_t *ranks;
    int32_t *mains;     /* the capture a REF or SPAN pattern is read from */
    int32_t *receivers; /* a REF pattern's receiver capture (Java's `recv.name()`), or -1 */
    PyObject **kinds;   /* a REF pattern's reference kind (str) */
    PyObject **names;   /* each capture's name (str) */
    Predicate **predicates;
    uint32_t *predicate_counts;
} Plan;

static const char PLAN_NAME[] = "knoxidx.parse._matches.Plan";

static void plan_free(Plan *plan) {
    if (plan == NULL) return;
    for (uint32_t p = 0; plan->kinds != NULL && p < plan->patterns; p++) Py_XDECREF(plan->kinds[p]);
    for (uint32_t c = 0; plan->names != NULL && c < plan->captures; c++) Py_XDECREF(plan->names[c]);
    for (uint32_t p = 0; plan->predicates != NULL && p < plan->patterns; p++) {
        /* (no counts: their allocation failed, and no predicate was read) */
        for (uint32_t i = 0; plan->predicate_counts != NULL && i < plan->predicate_counts[p]; i++)
            Py_XDECREF(plan->predicates[p][i].value);
        PyMem_Free(plan->predicates[p]);
    }
    PyMem_Free(plan->modes);
    PyMem_Free(plan->ranks);
    PyMem_Free(plan->mains);
    PyMem_Free(plan->receivers);
    PyMem_Free(plan->kinds);
    PyMem_Free(plan->names);
    PyMem_Free(plan->predicates);
    PyMem_Free(plan->predicate_counts);
    Py_XDECREF(plan->query);
    PyMem_Free(plan);
}

static void plan_capsule_free(PyObject *capsule) {
    plan_free((Plan *)PyCapsule_GetPointer(capsule, PLAN_NAME));
}

/* The text predicates of one pattern, read from the query; -1 with an exception set on one
 * this module does not evaluate. */
static int read_predicates(Plan *plan, uint32_t pattern, PyObject *re_compile) {
    uint32_t steps;
    const TSQueryPredicateStep *step = ts_query_predicates_for_pattern(plan->ts, pattern, &steps);
    uint32_t count = 0;
    for (uint32_t i = 0; i < steps; i++) count += step[i].type == TSQueryPredicateStepTypeDone;
    plan->predicate_counts[pattern] = 0;
    plan->predicates[pattern] = count ? PyMem_Calloc(count, sizeof(Predicate)) : NULL;
    if (count && plan->predicates[pattern] == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    uint32_t start = 0;
    for (uint32_t i = 0; i < steps; i++) {
        if (step[i].type != TSQueryPredicateStepTypeDone) continue;
        const TSQueryPredicateStep *s = step + start;
        uint32_t length = i - start;
        start = i + 1;
        uint32_t name_length;
        const char *name = length ? ts_query_string_value_for_id(plan->ts, s[0].value_id, &name_length) : "";
        int op = -1;
        if (length == 3 && s[0].type == TSQueryPredicateStepTypeString && s[1].type == TSQueryPredicateStepTypeCapture) {
            if (strcmp(name, "eq?") == 0) op = OP_EQ;
            else if (strcmp(name, "not-eq?") == 0) op = OP_NOT_EQ;
            else if (strcmp(name, "match?") == 0 && s[2].type == TSQueryPredicateStepTypeString) op = OP_MATCH;
            else if (strcmp(name, "not-match?") == 0 && s[2].type == TSQueryPredicateStepTypeString) op = OP_NOT_MATCH;
        }
        if (op < 0) {
            PyErr_Format(PyExc_ValueError, "pattern %u: predicate #%s is not evaluated natively", pattern, name);
            return -1;
        }
        Predicate *predicate = &plan->predicates[pattern][plan->predicate_counts[pattern]++];
        predicate->op = op;
        predicate->capture = s[1].value_id;
        predicate->other = -1;
        if (s[2].type == TSQueryPredicateStepTypeCapture) {
            predicate->other = s[2].value_id;
            continue;
        }
        uint32_t value_length;
        const char *value = ts_query_string_value_for_id(plan->ts, s[2].value_id, &value_length);
        if (op == OP_EQ || op == OP_NOT_EQ) {
            predicate->value = PyBytes_FromStringAndSize(value, value_length);
        } else {
            PyObject *regex = PyObject_CallFunction(re_compile, "s#", value, (Py_ssize_t)value_length);
            predicate->value = regex ? PyObject_GetAttrString(regex, "search") : NULL;
            Py_XDECREF(regex);
        }
        if (predicate->value == NULL) return -1;
    }
    return 0;
}

/* plan(query, modes, ranks, mains, receivers, kinds) -> an opaque plan for matches(): per
 * pattern its mode (bytes: 0 nodes, 1 reference, 2 span), its reference kind's rank (bytes),
 * main and receiver capture ids (tuples of ints, -1 for none) and reference kind (a tuple of
 * str or None). */
static PyObject *plan_new(PyObject *module, PyObject *args) {
    PyObject *query, *mains, *receivers, *kinds;
    Py_buffer modes, ranks;
    if (!PyArg_ParseTuple(args, "Oy*y*O!O!O!", &query, &modes, &ranks, &PyTuple_Type, &mains,
                          &PyTuple_Type, &receivers, &PyTuple_Type, &kinds))
        return NULL;
    PyObject *result = NULL, *re = NULL, *re_compile = NULL;
    Plan *plan = PyMem_Calloc(1, sizeof(Plan));
    if (plan == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (strcmp(Py_TYPE(query)->tp_name, "tree_sitter.Query") != 0) {
        PyErr_SetString(PyExc_TypeError, "plan() takes a tree_sitter.Query");
        goto done;
    }
    plan->query = Py_NewRef(query);
    plan->ts = ((QueryObject *)query)->query;
    plan->patterns = ts_query_pattern_count(plan->ts);
    plan->captures = ts_query_capture_count(plan->ts);
    Py_ssize_t n = plan->patterns;
    if (modes.len != n || ranks.len != n || PyTuple_GET_SIZE(mains) != n ||
        PyTuple_GET_SIZE(receivers) != n || PyTuple_GET_SIZE(kinds) != n) {
        PyErr_SetString(PyExc_ValueError, "plan(): one entry per pattern expected");
        goto done;
    }
    plan->modes = PyMem_Malloc(n);
    plan->ranks = PyMem_Malloc(n);
    plan->mains = PyMem_Calloc(n, sizeof(int32_t));
    plan->receivers = PyMem_Calloc(n, sizeof(int32_t));
    plan->kinds = PyMem_Calloc(n, sizeof(PyObject *));
    plan->names = PyMem_Calloc(plan->captures + 1, sizeof(PyObject *));
    plan->predicates = PyMem_Calloc(n, sizeof(Predicate *));
    plan->predicate_counts = PyMem_Calloc(n, sizeof(uint32_t));
    if (!plan->modes || !plan->ranks || !plan->mains || !plan->receivers || !plan->kinds ||
        !plan->names || !plan->predicates || !plan->predicate_counts) {
        PyErr_NoMemory();
        goto done;
    }
    memcpy(plan->modes, modes.buf, n);
    memcpy(plan->ranks, ranks.buf, n);
    for (uint32_t c = 0; c < plan->captures; c++) {
        uint32_t length;
        const char *name = ts_query_capture_name_for_id(plan->ts, c, &length);
        plan->names[c] = PyUnicode_FromStringAndSize(name, length);
        if (plan->names[c] == NULL) goto done;
        PyUnicode_InternInPlace(&plan->names[c]);
    }
    if ((re = PyImport_ImportModule("re")) == NULL) goto done;
    if ((re_compile = PyObject_GetAttrString(re, "compile")) == NULL) goto done;
    for (Py_ssize_t p = 0; p < n; p++) {
        long main = PyLong_AsLong(PyTuple_GET_ITEM(mains, p));
        long receiver = PyLong_AsLong(PyTuple_GET_ITEM(receivers, p));
        if (PyErr_Occurred()) goto done;
        if (plan->modes[p] > MODE_SPAN || main >= (long)plan->captures || receiver >= (long)plan->captures ||
            (plan->modes[p] != MODE_NODES && main < 0)) {
            PyErr_Format(PyExc_ValueError, "plan(): pattern %zd's captures are out of range", p);
            goto done;
        }
        plan->mains[p] = (int32_t)main;
        plan->receivers[p] = (int32_t)receiver;
        PyObject *kind = PyTuple_GET_ITEM(kinds, p);
        if (plan->modes[p] == MODE_REF && !PyUnicode_Check(kind)) {
            PyErr_Format(PyExc_ValueError, "plan(): reference pattern %zd has no kind", p);
            goto done;
        }
        plan->kinds[p] = Py_NewRef(kind);
        if (read_predicates(plan, (uint32_t)p, re_compile) < 0) goto done;
    }
    result = PyCapsule_New(plan, PLAN_NAME, plan_capsule_free);
    if (result != NULL) plan = NULL;
done:
    plan_free(plan);
    Py_XDECREF(re_compile);
    Py_XDECREF(re);
    PyBuffer_Release(&modes);
    PyBuffer_Release(&ranks);
    return result;
}

/* Whether the captured text of every node of ``capture`` in ``match`` passes; -1 on error. */
static int satisfies(const Predicate *predicate, const TSQueryMatch *match, const char *source,
                     Py_ssize_t size) {
    for (uint16_t i = 0; i < match->capture_count; i++) {
        const TSQueryCapture *capture = &match->captures[i];
        if (capture->index != predicate->capture) continue;
        uint32_t start = ts_node_start_byte(capture->node), end = ts_node_end_byte(capture->node);
        if (end > size) end = (uint32_t)size;
        if (start > end) start = end;
        int ok;
        if (predicate->op == OP_EQ || predicate->op == OP_NOT_EQ) {
            const char *other = NULL;
            Py_ssize_t other_length = 0;
            if (predicate->other < 0) {
                other = PyBytes_AS_STRING(predicate->value);
                other_length = PyBytes_GET_SIZE(predicate->value);
            } else {  /* the other capture's first node in this match */
                for (uint16_t j = 0; j < match->capture_count; j++) {
                    if (match->captures[j].index != (uint32_t)predicate->other) continue;
                    uint32_t a = ts_node_start_byte(match->captures[j].node);
                    uint32_t b = ts_node_end_byte(match->captures[j].node);
                    if (b > size) b = (uint32_t)size;
                    if (a > b) a = b;
                    other = source + a;
                    other_length = b - a;
                    break;
                }
                if (other == NULL) continue;
            }
            ok = other_length == (Py_ssize_t)(end - start) && memcmp(source + start, other, end - start) == 0;
            if (predicate->op == OP_NOT_EQ) ok = !ok;
        } else {
            PyObject *text = PyUnicode_DecodeUTF8(source + start, end - start, "replace");
            if (text == NULL) return -1;
            PyObject *found = PyObject_CallOneArg(predicate->value, text);
            Py_DECREF(text);
            if (found == NULL) return -1;
            ok = found != Py_None;
            Py_DECREF(found);
            if (predicate->op == OP_NOT_MATCH) ok = !ok;
        }
        if (!ok) return 0;
    }
    return 1;
}

/* A tuple of ``count`` new references (NULL for one whose creation failed), stolen whether or
 * not it is made; NULL with the exception set if any is NULL or the tuple cannot be made. */
static PyObject *tuple_of(PyObject **items, int count) {
    PyObject *tuple = NULL;
    int complete = 1;
    for (int i = 0; i < count; i++) complete = complete && items[i] != NULL;
    if (complete) tuple = PyTuple_New(count);
    for (int i = 0; i < count; i++) {
        if (tuple != NULL) PyTuple_SET_ITEM(tuple, i, items[i]);
        else Py_XDECREF(items[i]);
    }
    return tuple;
}

static PyObject *span(uint32_t start, uint32_t end) {
    PyObject *items[2] = {PyLong_FromUnsignedLong(start), PyLong_FromUnsignedLong(end)};
    return tuple_of(items, 2);
}

/* A reference pattern's match: (key, start, end, kind, row, column, receiver start, receiver
 * end), the key ordering by (start, end, kind rank) as extraction's does. */
static PyObject *reference(const Plan *plan, const TSQueryMatch *match) {
    const TSQueryCapture *main = NULL, *receiver = NULL;
    int32_t want = plan->mains[match->pattern_index], recv = plan->receivers[match->pattern_index];
    for (uint16_t i = 0; i < match->capture_count; i++) {
        const TSQueryCapture *capture = &match->captures[i];
        if (main == NULL && (int32_t)capture->index == want) main = capture;
        else if (receiver == NULL && (int32_t)capture->index == recv) receiver = capture;
    }
    if (main == NULL) Py_RETURN_NONE;
    uint32_t start = ts_node_start_byte(main->node), end = ts_node_end_byte(main->node);
    TSPoint at = ts_node_start_point(main->node);
    unsigned long long key = ((unsigned long long)start << 35) | ((unsigned long long)end << 3) |
                             plan->ranks[match->pattern_index];
    PyObject *items[8] = {
        PyLong_FromUnsignedLongLong(key),
        PyLong_FromUnsignedLong(start),
        PyLong_FromUnsignedLong(end),
        Py_NewRef(plan->kinds[match->pattern_index]),
        PyLong_FromUnsignedLong(at.row),
        PyLong_FromUnsignedLong(at.column),
        receiver ? PyLong_FromUnsignedLong(ts_node_start_byte(receiver->node)) : PyLong_FromLong(-1),
        receiver ? PyLong_FromUnsignedLong(ts_node_end_byte(receiver->node)) : PyLong_FromLong(-1),
    };
    return tuple_of(items, 8);
}

/* py-tree-sitter's (pattern, {capture name: [Node, ...]}) for one match. */
static PyObject *nodes_match(const Plan *plan, const TSQueryMatch *match, NodeObject *root) {
    PyObject *captures = PyDict_New();
    if (captures == NULL) return NULL;
    for (uint16_t i = 0; i < match->capture_count; i++) {
        const TSQueryCapture *capture = &match->captures[i];
        PyObject *name = plan->names[capture->index];
        PyObject *nodes = PyDict_GetItemWithError(captures, name);
        if (nodes == NULL) {
            if (PyErr_Occurred() || (nodes = PyList_New(0)) == NULL) goto fail;
            int stored = PyDict_SetItem(captures, name, nodes);
            Py_DECREF(nodes);
            if (stored < 0) goto fail;
        }
        NodeObject *node = PyObject_New(NodeObject, Py_TYPE(root));
        if (node == NULL) goto fail;
        node->node = capture->node;
        node->children = NULL;
        node->tree = Py_NewRef(root->tree);
        int appended = PyList_Append(nodes, (PyObject *)node);
        Py_DECREF(node);
        if (appended < 0) goto fail;
    }
    PyObject *pair[2] = {PyLong_FromUnsignedLong(match->pattern_index), captures};
    return tuple_of(pair, 2);
fail:
    Py_DECREF(captures);
    return NULL;
}

/* matches(plan, root, source, max_start_depth) -> (references, spans, others): see the top. */
static PyObject *matches(PyObject *module, PyObject *args) {
    PyObject *capsule, *root_obj;
    const char *source;
    Py_ssize_t size;
    unsigned int depth;
    if (!PyArg_ParseTuple(args, "OOy#I", &capsule, &root_obj, &source, &size, &depth)) return NULL;
    Plan *plan = PyCapsule_GetPointer(capsule, PLAN_NAME);
    if (plan == NULL) return NULL;
    if (strcmp(Py_TYPE(root_obj)->tp_name, "tree_sitter.Node") != 0) {
        PyErr_SetString(PyExc_TypeError, "matches() takes a tree_sitter.Node");
        return NULL;
    }
    NodeObject *root = (NodeObject *)root_obj;
    /* a cursor per call: a regex predicate runs Python, which may let another thread in */
    TSQueryCursor *cursor = ts_query_cursor_new();
    PyObject *references = PyList_New(0), *spans = PyList_New(0), *others = PyList_New(0);
    if (cursor == NULL) PyErr_NoMemory();
    if (cursor == NULL || references == NULL || spans == NULL || others == NULL) goto fail;
    ts_query_cursor_set_max_start_depth(cursor, depth);
    ts_query_cursor_exec(cursor, plan->ts, root->node);
    TSQueryMatch match;
    while (ts_query_cursor_next_match(cursor, &match)) {
        uint32_t p = match.pattern_index;
        int ok = 1;
        for (uint32_t i = 0; ok == 1 && i < plan->predicate_counts[p]; i++)
            ok = satisfies(&plan->predicates[p][i], &match, source, size);
        if (ok < 0) goto fail;
        if (!ok) continue;
        PyObject *item, *into;
        if (plan->modes[p] == MODE_REF) {
            item = reference(plan, &match);
            into = references;
        } else if (plan->modes[p] == MODE_SPAN) {
            item = NULL;
            for (uint16_t i = 0; i < match.capture_count; i++) {
                if ((int32_t)match.captures[i].index == plan->mains[p]) {
                    item = span(ts_node_start_byte(match.captures[i].node), ts_node_end_byte(match.captures[i].node));
                    break;
                }
            }
            if (item == NULL && !PyErr_Occurred()) continue;
            into = spans;
        } else {
            item = nodes_match(plan, &match, root);
            into = others;
        }
        if (item == NULL) goto fail;
        if (item == Py_None) {
            Py_DECREF(item);
            continue;
        }
        int appended = PyList_Append(into, item);
        Py_DECREF(item);
        if (appended < 0) goto fail;
    }
    ts_query_cursor_delete(cursor);
    PyObject *result[3] = {references, spans, others};
    return tuple_of(result, 3);
fail:
    if (cursor != NULL) ts_query_cursor_delete(cursor);
    Py_XDECREF(references);
    Py_XDECREF(spans);
    Py_XDECREF(others);
    return NULL;
}

/* pattern_captures(query) -> for each pattern, the names of the captures it has */
static PyObject *pattern_captures(PyObject *module, PyObject *query) {
    if (strcmp(Py_TYPE(query)->tp_name, "tree_sitter.Query") != 0) {
        PyErr_SetString(PyExc_TypeError, "pattern_captures() takes a tree_sitter.Query");
        return NULL;
    }
    TSQuery *ts = ((QueryObject *)query)->query;
    uint32_t patterns = ts_query_pattern_count(ts), captures = ts_query_capture_count(ts);
    PyObject *out = PyTuple_New(patterns);
    if (out == NULL) return NULL;
    for (uint32_t p = 0; p < patterns; p++) {
        PyObject *names = PyList_New(0);
        if (names == NULL) goto fail;
        PyTuple_SET_ITEM(out, p, names);
        for (uint32_t c = 0; c < captures; c++) {
            if (ts_query_capture_quantifier_for_id(ts, p, c) == TSQuantifierZero) continue;
            uint32_t length;
            const char *name = ts_query_capture_name_for_id(ts, c, &length);
            PyObject *text = PyUnicode_FromStringAndSize(name, length);
            if (text == NULL || PyList_Append(names, text) < 0) {
                Py_XDECREF(text);
                goto fail;
            }
            Py_DECREF(text);
        }
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

static PyMethodDef methods[] = {
    {"plan", plan_new, METH_VARARGS, "plan(query, modes, ranks, mains, receivers, kinds)"},
    {"matches", matches, METH_VARARGS, "matches(plan, root, source, max_start_depth)"},
    {"pattern_captures", pattern_captures, METH_O, "pattern_captures(query)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_matches",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__matches(void) {
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL) return NULL;
#ifdef KNOXIDX_TREE_SITTER_VERSION
    if (PyModule_AddStringConstant(module, "TREE_SITTER_VERSION", KNOXIDX_TREE_SITTER_VERSION) < 0) {
        Py_DECREF(module);
        return NULL;
    }
#endif
    return module;
}
