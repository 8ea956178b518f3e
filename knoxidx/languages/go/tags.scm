; knoxidx tags for Go.

(package_clause (package_identifier) @package)

(function_declaration name: (identifier) @name result: (_)? @def.type) @definition.function
; The receiver is the list's first entry (`.`), or its first after a comment. Unanchored, each
; entry of a receiver list began a match that then waited for the name, and tree-sitter's cursor
; took time cubic in them: `func (a, a, ... s *T) M()` (invalid Go, which tree-sitter parses
; without an error) took 23 s of CPU for 2,000 entries, and 30,000 killed the parse worker past
; its CPU bound (found by bench.long_runs).
(method_declaration
  receiver: (parameter_list . (parameter_declaration type: (_) @def.owner))
  name: (field_identifier) @name
  result: (_)? @def.type) @definition.method
(method_declaration
  receiver: (parameter_list . (comment) (parameter_declaration type: (_) @def.owner))
  name: (field_identifier) @name
  result: (_)? @def.type) @definition.method
(type_declaration (type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct)
(type_declaration (type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface)
(type_declaration (type_spec name: (type_identifier) @name
  type: [(type_identifier) (qualified_type) (pointer_type) (function_type) (map_type)
         (slice_type) (array_type) (channel_type) (generic_type)]) @definition.type)
; `type X = Y` is Y under another name (its methods too): the aliased type is the hint. A defined
; type `type X Y` above gets none: it has Y's fields but not its methods.
(type_declaration (type_alias name: (type_identifier) @name type: (_) @def.type) @definition.type)
; (their types are read from the node in extraction: TYPE_AFTER_NAMES in languages/go/hooks.py). A
; const_spec's `name` field spans `x, y` with its commas, and `name: (identifier)` matched x alone;
; a `var ( ... )` block holds its specs in a var_spec_list.
(source_file (const_declaration (const_spec (identifier) @name) @definition.constant))
(source_file (var_declaration (var_spec name: (identifier) @name) @definition.variable))
(source_file (var_declaration (var_spec_list (var_spec name: (identifier) @name) @definition.variable)))
(field_declaration name: (field_identifier) @name) @definition.field
; an interface's method declares what it returns as a function does (`Find(key Key) Label`)
(method_elem name: (field_identifier) @name result: (_)? @def.type) @definition.method

(call_expression function: [(identifier) (selector_expression)] @reference.call)
; a generic function given its type arguments: `F[T](x)` reads as an index expression, `F[T,
; U](x)` and `pkg.F[T](x)` as a conversion to a generic type (the checker's answer to a real
; conversion says so: no call is counted there)
(call_expression function: (index_expression operand: [(identifier) (selector_expression)] @reference.call))
(type_conversion_expression type: (generic_type type: [(type_identifier) (qualified_type)] @reference.call))
; a method of a composite literal (`T{...}.m()`, `(&T{...}).m()`): the literal's type is the
; receiver's
(call_expression function: (selector_expression
  operand: [(composite_literal type: [(type_identifier) (qualified_type)] @receiver)
            (parenthesized_expression [
              (composite_literal type: [(type_identifier) (qualified_type)] @receiver)
              (unary_expression operator: "&"
                operand: (composite_literal type: [(type_identifier) (qualified_type)] @receiver))])]
  field: (field_identifier) @reference.call))
(composite_literal type: [(type_identifier) (qualified_type)] @reference.new)
(composite_literal type: (generic_type type: [(type_identifier) (qualified_type)] @reference.new))

; an embedded field, `T` or `*T` (the `*` is the field's own token: its type is still `T`)
(field_declaration_list (field_declaration !name type: [(type_identifier) (qualified_type)] @reference.extends))
(interface_type (type_elem [(type_identifier) (qualified_type)] @reference.extends))

(parameter_declaration type: [(type_identifier) (qualified_type)] @reference.type)
(pointer_type [(type_identifier) (qualified_type)] @reference.type)
(function_declaration result: [(type_identifier) (qualified_type)] @reference.type)
(method_declaration result: [(type_identifier) (qualified_type)] @reference.type)
(field_declaration name: (_) type: [(type_identifier) (qualified_type)] @reference.type)
(slice_type element: [(type_identifier) (qualified_type)] @reference.type)
(map_type value: [(type_identifier) (qualified_type)] @reference.type)
(var_spec type: [(type_identifier) (qualified_type)] @reference.type)
; the type another is declared as (`type Snapshot LoggedStore`) or aliases (`type Journal = LoggedStore`)
(type_spec type: [(type_identifier) (qualified_type)] @reference.type)
(type_alias type: [(type_identifier) (qualified_type)] @reference.type)
(type_arguments (type_elem [(type_identifier) (qualified_type)] @reference.type))

(argument_list [(identifier) (selector_expression)] @reference.value)
; a keyed element's value; its key where it is an expression: a map's (`map[K]V{k: v}`), a
; qualified one (`pkg.K: v`); a key of a named type's literal (`T{name: v}`) is read as a member
; of the type (`T.name`: a struct's field), never a key of a struct written in place or of an
; element whose type is elided (`[]struct{ name string }{{name: ..}}`): a field, no name in scope
(keyed_element value: (literal_element [(identifier) (selector_expression)] @reference.value))
(keyed_element key: (literal_element (selector_expression) @reference.value))
(composite_literal type: (map_type)
  body: (literal_value (keyed_element key: (literal_element (identifier) @reference.value))))
(composite_literal type: [(type_identifier) (qualified_type)] @receiver
  body: (literal_value (keyed_element key: (literal_element (identifier) @reference.value))))
(composite_literal type: (generic_type type: [(type_identifier) (qualified_type)] @receiver)
  body: (literal_value (keyed_element key: (literal_element (identifier) @reference.value))))
(return_statement (expression_list [(identifier) (selector_expression)] @reference.value))

; what an expression reads: operands, conditions, indexes, elements, assigned values
(binary_expression [(identifier) (selector_expression)] @reference.value)  ; left or right
(unary_expression operand: [(identifier) (selector_expression)] @reference.value)
(index_expression operand: [(identifier) (selector_expression)] @reference.value)
(index_expression index: [(identifier) (selector_expression)] @reference.value)
(literal_value (literal_element [(identifier) (selector_expression)] @reference.value))
(if_statement condition: [(identifier) (selector_expression)] @reference.value)
(assignment_statement right: (expression_list [(identifier) (selector_expression)] @reference.value))
(short_var_declaration right: (expression_list [(identifier) (selector_expression)] @reference.value))
(var_spec value: (expression_list [(identifier) (selector_expression)] @reference.value))
(expression_switch_statement value: [(identifier) (selector_expression)] @reference.value)
(range_clause right: [(identifier) (selector_expression)] @reference.value)

(import_declaration) @import

; A name bound with a value binds as its `:=` does: `var x = v` as `x := v`, `var a, b = v, w`
; as `a, b := v, w` (in a function and at a package's top level alike), each pattern below one
; alternative for each (`!type`: `var x T = v` is a T, bound above). The names are anchored at the
; first (or second): a name free to stand anywhere made the query cursor quadratic in them.
; `new(T)`, `make(Ts)`, `make([]T, n)`: only the builtins take a type where arguments go, and
; tree-sitter reads it as a type there (`f(T)` passes an identifier); the call's own binding
; below is dropped (TYPE_ARGUMENT_CALLS in hooks.py)
[(short_var_declaration
   left: (expression_list . (identifier) @binding.name)
   right: (expression_list . (call_expression arguments: (argument_list
     . [(type_identifier) (qualified_type) (generic_type) (pointer_type) (slice_type) (array_type)
        (map_type) (channel_type)] @binding.type))))
 (var_spec . name: (identifier) @binding.name !type
   value: (expression_list . (call_expression arguments: (argument_list
     . [(type_identifier) (qualified_type) (generic_type) (pointer_type) (slice_type) (array_type)
        (map_type) (channel_type)] @binding.type))))]
[(short_var_declaration
   left: (expression_list . (identifier) @binding.name)
   right: (expression_list . (call_expression function: [(identifier) (selector_expression)] @binding.call)))
 (var_spec . name: (identifier) @binding.name !type
   value: (expression_list . (call_expression function: [(identifier) (selector_expression)] @binding.call)))]
; a literal of a container (`xs := []*T{..}`) binds its element's type, as `var xs []*T` does
[(short_var_declaration
   left: (expression_list . (identifier) @binding.name)
   right: (expression_list . (composite_literal
     type: [(type_identifier) (qualified_type) (generic_type) (slice_type) (array_type)
            (implicit_length_array_type) (map_type)] @binding.type)))
 (var_spec . name: (identifier) @binding.name !type
   value: (expression_list . (composite_literal
     type: [(type_identifier) (qualified_type) (generic_type) (slice_type) (array_type)
            (implicit_length_array_type) (map_type)] @binding.type)))]
[(short_var_declaration
   left: (expression_list . (identifier) @binding.name)
   right: (expression_list . (unary_expression operand: (composite_literal
     type: [(type_identifier) (qualified_type) (generic_type)] @binding.type))))
 (var_spec . name: (identifier) @binding.name !type
   value: (expression_list . (unary_expression operand: (composite_literal
     type: [(type_identifier) (qualified_type) (generic_type)] @binding.type))))]
; a call's results after its first: `_, b := f()`, `a, b, c, err := f()` (`@binding.result`:
; each name's place in the list is the result's; the names are read from the node, see
; bound_names); the call is the only value (`a, b := f(), g()` binds b to g, below)
[(short_var_declaration
   left: (expression_list . (identifier) . (identifier))
   right: (expression_list . (call_expression function: [(identifier) (selector_expression)] @binding.call) .))
 (var_spec . name: (identifier) . name: (identifier) !type
   value: (expression_list . (call_expression function: [(identifier) (selector_expression)] @binding.call) .))
] @binding.names @binding.result
; a type assertion: `v := x.(*T)`, `v, ok := x.(T)` (also in `if v, ok := x.(*T); ok`) bind v
[(short_var_declaration
   left: (expression_list . (identifier) @binding.name)
   right: (expression_list . (type_assertion_expression
     type: [(type_identifier) (qualified_type) (generic_type)
            (pointer_type [(type_identifier) (qualified_type) (generic_type)])] @binding.type)))
 (var_spec . name: (identifier) @binding.name !type
   value: (expression_list . (type_assertion_expression
     type: [(type_identifier) (qualified_type) (generic_type)
            (pointer_type [(type_identifier) (qualified_type) (generic_type)])] @binding.type)))]
; a copy of a field or a package's variable (`root := m.root`): of its declared type (a selector
; alone: a bare name would be read as a type's)
[(short_var_declaration
   left: (expression_list . (identifier) @binding.name)
   right: (expression_list . (selector_expression) @binding.type))
 (var_spec . name: (identifier) @binding.name !type
   value: (expression_list . (selector_expression) @binding.type))]
; a copy of a name (`for p := c; ..`, `cmd := rootCmd`): bound as the name it copies is, in the
; function or the package (extract._copies_typed)
[(short_var_declaration
   left: (expression_list . (identifier) @binding.name .)
   right: (expression_list . (identifier) @binding.copy .))
 (var_spec . name: (identifier) @binding.name !type
   value: (expression_list . (identifier) @binding.copy .))]
; a type switch's `v := x.(type)`: in its default case and a case of several types, what was
; switched on (a case of one type narrows it, below)
(type_switch_statement alias: (expression_list . (identifier) @binding.name .)
  value: (identifier) @binding.copy)
; a field's address (`lp := &o.labels`): a pointer to the field, whose methods are the field's
[(short_var_declaration
   left: (expression_list . (identifier) @binding.name)
   right: (expression_list . (unary_expression operator: "&" operand: (selector_expression) @binding.type)))
 (var_spec . name: (identifier) @binding.name !type
   value: (expression_list . (unary_expression operator: "&" operand: (selector_expression) @binding.type)))]
; the second name of a pair of values (`x, y := &o.bits, &p.bits`, `a, b := &T{}, U{}`,
; `a, b := f(), g()`; the first is read above)
[(short_var_declaration
   left: (expression_list . (identifier) . (identifier) @binding.name)
   right: (expression_list . (_) . [
     (selector_expression) @binding.type
     (unary_expression operator: "&" operand: (selector_expression) @binding.type)
     (composite_literal type: [(type_identifier) (qualified_type) (generic_type) (slice_type)
       (array_type) (implicit_length_array_type) (map_type)] @binding.type)
     (unary_expression operand: (composite_literal
       type: [(type_identifier) (qualified_type) (generic_type)] @binding.type))
     (call_expression function: [(identifier) (selector_expression)] @binding.call)]))
 (var_spec . name: (identifier) . name: (identifier) @binding.name !type
   value: (expression_list . (_) . [
     (selector_expression) @binding.type
     (unary_expression operator: "&" operand: (selector_expression) @binding.type)
     (composite_literal type: [(type_identifier) (qualified_type) (generic_type) (slice_type)
       (array_type) (implicit_length_array_type) (map_type)] @binding.type)
     (unary_expression operand: (composite_literal
       type: [(type_identifier) (qualified_type) (generic_type)] @binding.type))
     (call_expression function: [(identifier) (selector_expression)] @binding.call)]))]
; an element of a value: `for _, v := range xs` (a slice's or map's; the one name of `for v :=
; range ch` is no element of a slice), `v := xs[i]`, `v, ok := m[k]`, `v, ok := <-ch`; `for _, v
; = range xs` declares nothing: it assigns a v declared before, of the type declared there
(range_clause left: (expression_list . (identifier) . (identifier) @binding.name) . ":="
  right: (_) @binding.element)
; ... of a literal (`for _, v := range []*T{..}`): the container's element type
(range_clause left: (expression_list . (identifier) . (identifier) @binding.name) . ":="
  right: (composite_literal type: [(slice_type) (array_type) (implicit_length_array_type)
                                   (map_type)] @binding.type))
(short_var_declaration
  left: (expression_list . (identifier) @binding.name)
  right: (expression_list . (index_expression operand: (_) @binding.element)))
; `rs := &specs[i]`: a pointer to the element, whose methods are the element's
(short_var_declaration
  left: (expression_list . (identifier) @binding.name)
  right: (expression_list . (unary_expression operator: "&"
    operand: (index_expression operand: (_) @binding.element))))
(short_var_declaration
  left: (expression_list . (identifier) @binding.name)
  right: (expression_list . (unary_expression operator: "<-" operand: (_) @binding.element)))
; a type switch's `v` is a T in a case of the one type T (`case *T:`); in a case of several,
; or the default, it is what was switched on: the first type followed by the case's statements
(type_switch_statement alias: (expression_list . (identifier) @narrowed.name)
  (type_case . type: [(type_identifier) (qualified_type) (generic_type)
                      (pointer_type [(type_identifier) (qualified_type) (generic_type)])]
    @narrowed.type . (statement_list)) @narrowed)
; `var a, b *T` binds every name to T: the names are read from
; the node (`@binding.names`), as a pattern holding a name and the type or value made the query
; cursor quadratic in the names (8,000 in one `var`: 0.8 s for the value pattern alone)
(var_spec type: [(type_identifier) (qualified_type) (generic_type)] @binding.type) @binding.names
(var_spec
  type: (pointer_type [(type_identifier) (qualified_type) (generic_type)] @binding.type)) @binding.names
; a container (`var xs []*T`) binds its element's type: containers have no methods (see
; _CONTAINER_PREFIX in parse/name_paths.py), a range or index over one reads it (`[]`)
(var_spec type: [(slice_type) (array_type) (map_type) (channel_type)] @binding.type) @binding.names
; (parameters the same way: `func f(a, b *T)`; a mangled file of 43,000 nodes took 9 s). A
; generic type (`List[T]`) binds as its type does: name_paths.type_path reads `List` out of it.
(parameter_declaration
  type: [(type_identifier) (qualified_type) (generic_type)] @binding.type) @binding.names
(parameter_declaration
  type: (pointer_type [(type_identifier) (qualified_type) (generic_type)] @binding.type)) @binding.names
(parameter_declaration
  type: [(slice_type) (array_type) (map_type) (channel_type)] @binding.type) @binding.names
; `opts ...Option` is a []Option: its elements are Options
(variadic_parameter_declaration
  type: [(type_identifier) (qualified_type) (generic_type)
         (pointer_type [(type_identifier) (qualified_type) (generic_type)])] @binding.type) @binding.names

; @local: a name a function binds for itself (receiver, parameters, named results, `:=`, `var`,
; `range` variables): a bare reference to it inside the function never means a package name.
(function_declaration parameters: (parameter_list [(parameter_declaration name: (identifier) @local)
  (variadic_parameter_declaration name: (identifier) @local)]))
(function_declaration result: (parameter_list (parameter_declaration name: (identifier) @local)))
(method_declaration receiver: (parameter_list (parameter_declaration name: (identifier) @local)))
(method_declaration parameters: (parameter_list [(parameter_declaration name: (identifier) @local)
  (variadic_parameter_declaration name: (identifier) @local)]))
(method_declaration result: (parameter_list (parameter_declaration name: (identifier) @local)))
(short_var_declaration left: (expression_list (identifier) @local))
(var_spec name: (identifier) @local)
(range_clause left: (expression_list (identifier) @local) . ":=")  ; (`=` assigns outer ones)
(func_literal parameters: (parameter_list [(parameter_declaration name: (identifier) @local)
  (variadic_parameter_declaration name: (identifier) @local)]))
(type_switch_statement alias: (expression_list (identifier) @local))
