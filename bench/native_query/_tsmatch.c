/* An experiment for issue #2, not part of knoxidx: tree-sitter's query matches without
 * py-tree-sitter's Python objects per match (no dict, list or Node per capture), to measure
 * what those objects cost. Built by ``python -m bench.native_query`` against the C library
 * of the installed py-tree-sitter's own source distribution, and reads py-tree-sitter's
 * Query and Node objects by their struct layout (tree_sitter/binding/types.h of 0.26), which
 * the build checks by version. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <tree_sitter/api.h>

typedef struct { PyObject_HEAD TSNode node; PyObject *children; PyObject *tree; } PyNode;
typedef struct { PyObject_HEAD TSQuery *query; } PyQuery;

static PyObject *new_node(PyTypeObject *type, TSNode node, PyObject *tree) {
    PyNode *self = PyObject_New(PyNode, type);
    if (self == NULL) return NULL;
    self->node = node;
    Py_INCREF(tree);
    self->tree = tree;
    self->children = NULL;
    return (PyObject *)self;
}

/* matches(query, root, max_start_depth, flat) -> [(pattern, capture, value...), ...]
 * A capture of a pattern whose byte in ``flat`` is 1 comes as four ints (start byte, end
 * byte, row, column), otherwise as a Node. Text predicates are not evaluated. */
static PyObject *matches(PyObject *module, PyObject *args) {
    PyObject *query_obj, *root_obj;
    unsigned int depth;
    Py_buffer flat;
    if (!PyArg_ParseTuple(args, "OOIy*", &query_obj, &root_obj, &depth, &flat)) return NULL;
    TSQuery *query = ((PyQuery *)query_obj)->query;
    PyNode *root = (PyNode *)root_obj;
    const unsigned char *modes = flat.buf;
    PyObject *out = PyList_New(0);
    TSQueryCursor *cursor = ts_query_cursor_new();
    if (out == NULL || cursor == NULL) goto fail;
    ts_query_cursor_set_max_start_depth(cursor, depth);
    ts_query_cursor_exec(cursor, query, root->node);
    TSQueryMatch match;
    while (ts_query_cursor_next_match(cursor, &match)) {
        int is_flat = match.pattern_index < flat.len && modes[match.pattern_index];
        PyObject *item = PyTuple_New(1 + match.capture_count * (is_flat ? 5 : 2));
        if (item == NULL) goto fail;
        PyTuple_SET_ITEM(item, 0, PyLong_FromLong(match.pattern_index));
        Py_ssize_t k = 1;
        for (uint16_t i = 0; i < match.capture_count; i++) {
            const TSQueryCapture *cap = &match.captures[i];
            PyTuple_SET_ITEM(item, k++, PyLong_FromUnsignedLong(cap->index));
            if (is_flat) {
                TSPoint start = ts_node_start_point(cap->node);
                PyTuple_SET_ITEM(item, k++, PyLong_FromUnsignedLong(ts_node_start_byte(cap->node)));
                PyTuple_SET_ITEM(item, k++, PyLong_FromUnsignedLong(ts_node_end_byte(cap->node)));
                PyTuple_SET_ITEM(item, k++, PyLong_FromUnsignedLong(start.row));
                PyTuple_SET_ITEM(item, k++, PyLong_FromUnsignedLong(start.column));
            } else {
                PyObject *node = new_node(Py_TYPE(root_obj), cap->node, root->tree);
                if (node == NULL) { Py_DECREF(item); goto fail; }
                PyTuple_SET_ITEM(item, k++, node);
            }
        }
        int failed = PyList_Append(out, item);
        Py_DECREF(item);
        if (failed) goto fail;
    }
    ts_query_cursor_delete(cursor);
    PyBuffer_Release(&flat);
    return out;
fail:
    if (cursor != NULL) ts_query_cursor_delete(cursor);
    PyBuffer_Release(&flat);
    Py_XDECREF(out);
    return NULL;
}

/* predicate_steps(query, pattern) -> how many predicate steps the pattern has (0: none) */
static PyObject *predicate_steps(PyObject *module, PyObject *args) {
    PyObject *query_obj;
    unsigned int pattern;
    if (!PyArg_ParseTuple(args, "OI", &query_obj, &pattern)) return NULL;
    if (pattern >= ts_query_pattern_count(((PyQuery *)query_obj)->query)) {
        PyErr_SetString(PyExc_IndexError, "no such pattern");
        return NULL;
    }
    uint32_t steps = 0;
    ts_query_predicates_for_pattern(((PyQuery *)query_obj)->query, pattern, &steps);
    return PyLong_FromUnsignedLong(steps);
}

static PyMethodDef methods[] = {
    {"matches", matches, METH_VARARGS, NULL},
    {"predicate_steps", predicate_steps, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_tsmatch", NULL, -1, methods};
PyMODINIT_FUNC PyInit__tsmatch(void) { return PyModule_Create(&module); }
