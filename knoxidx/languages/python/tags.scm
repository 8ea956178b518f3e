; knoxidx tags for Python. Capture vocabulary (shared by every language):
;   @definition.<kind> + @name (+ @def.type: declared/return type)
;   @reference.<kind>  on the expression naming the target (call, new, type, value, extends)
;   @import            import statements, decoded by the language module
;   @binding.name + @binding.type / @binding.call   what a local name holds

(function_definition
  name: (identifier) @name
  return_type: (type)? @def.type) @definition.function

(class_definition name: (identifier) @name) @definition.class

(module (expression_statement
  (assignment left: (identifier) @name type: (type)? @def.type) @definition.variable))

(class_definition body: (block (expression_statement
  (assignment left: (identifier) @name type: (type)? @def.type) @definition.field)))

(type_alias_statement left: (type (identifier) @name) right: (_) @def.type) @definition.type

(call function: [(identifier) (attribute)] @reference.call)

(class_definition superclasses: (argument_list [(identifier) (attribute)] @reference.extends))
; a generic base (`class REAL(Float[_N])`): the class it parameterises
(class_definition
  superclasses: (argument_list (subscript value: [(identifier) (attribute)] @reference.extends)))

(type [(identifier) (attribute)] @reference.type)
(type (binary_operator [(identifier) (attribute)] @reference.type))  ; `A | None`
(type (binary_operator (binary_operator [(identifier) (attribute)] @reference.type)))
(type (binary_operator (binary_operator (binary_operator [(identifier) (attribute)] @reference.type))))
(type (generic_type (identifier) @reference.type))
(type (subscript value: [(identifier) (attribute)] @reference.type))

(call arguments: (argument_list [(identifier) (attribute)] @reference.value))
(call arguments: (argument_list (keyword_argument value: [(identifier) (attribute)] @reference.value)))
(assignment right: [(identifier) (attribute)] @reference.value)
(return_statement [(identifier) (attribute)] @reference.value)
(decorator [(identifier) (attribute)] @reference.value)

; what an expression reads: operands, conditions, subscripts, elements, interpolations (a
; constant or module variable compared, added, indexed or listed is used as much as one passed)
(binary_operator [(identifier) (attribute)] @reference.value)  ; left or right
(comparison_operator [(identifier) (attribute)] @reference.value)
(boolean_operator [(identifier) (attribute)] @reference.value)  ; left or right
(not_operator argument: [(identifier) (attribute)] @reference.value)
(unary_operator argument: [(identifier) (attribute)] @reference.value)
(conditional_expression [(identifier) (attribute)] @reference.value)
(subscript value: [(identifier) (attribute)] @reference.value)
(subscript subscript: [(identifier) (attribute)] @reference.value)
; an element of a list, tuple or set display (not `([(list) ...] (identifier))`: a parenthesised
; pair of sibling patterns, which matched a name that follows a list)
[(list [(identifier) (attribute)] @reference.value)
 (tuple [(identifier) (attribute)] @reference.value)
 (set [(identifier) (attribute)] @reference.value)]
(pair value: [(identifier) (attribute)] @reference.value)
(augmented_assignment right: [(identifier) (attribute)] @reference.value)
(for_statement right: [(identifier) (attribute)] @reference.value)
(for_in_clause right: [(identifier) (attribute)] @reference.value)
(if_statement condition: [(identifier) (attribute)] @reference.value)
(elif_clause condition: [(identifier) (attribute)] @reference.value)
(while_statement condition: [(identifier) (attribute)] @reference.value)
(interpolation expression: [(identifier) (attribute)] @reference.value)

; what a function without a return annotation returns (parse/returns.py): each `return`, and
; what makes it return no value of its own (a generator's `yield`, an `async def`)
[(return_statement) (yield)] @returned
(function_definition "async" @returned)

(import_statement) @import
(import_from_statement) @import

(assignment
  left: [(identifier) (attribute object: (identifier) attribute: (identifier))] @binding.name
  right: (call function: [(identifier) (attribute)] @binding.call))
; `x = await f()`: what the coroutine f declares it returns (`async def f() -> T`)
(assignment
  left: [(identifier) (attribute object: (identifier) attribute: (identifier))] @binding.name
  right: (await (call function: [(identifier) (attribute)] @binding.call)))
; an annotation: a name, a generic (`Select[Any]`, `Optional[T]`) or a forward reference
; (`"Select"`); name_paths.type_path reads the type out of it
(assignment
  left: [(identifier) (attribute object: (identifier) attribute: (identifier))] @binding.name
  type: (type [(identifier) (attribute) (generic_type) (subscript) (string)] @binding.type))
(typed_parameter (identifier) @binding.name
  type: (type [(identifier) (attribute) (generic_type) (subscript) (string)] @binding.type))
(typed_default_parameter name: (identifier) @binding.name
  type: (type [(identifier) (attribute) (generic_type) (subscript) (string)] @binding.type))
; `x: T | None` (Optional): what x holds when it holds anything is a T
(typed_parameter (identifier) @binding.name
  type: (type (binary_operator
    left: [(identifier) (attribute) (generic_type) (subscript) (string)] @binding.type
    right: (none))))
(typed_default_parameter name: (identifier) @binding.name
  type: (type (binary_operator
    left: [(identifier) (attribute) (generic_type) (subscript) (string)] @binding.type
    right: (none))))
; a test's or a pytest fixture's untyped parameter: pytest passes it the fixture of its name
; (``RULES.injected``); a default value makes it none (a method's `self` is never one)
(function_definition name: (identifier) @_test
  parameters: (parameters (identifier) @binding.name @binding.injected)
  (#match? @_test "^test")
  (#not-match? @binding.name "^(self|cls)$"))
(decorated_definition (decorator) @_fixture
  definition: (function_definition
    parameters: (parameters (identifier) @binding.name @binding.injected))
  (#match? @_fixture "fixture")
  (#not-match? @binding.name "^(self|cls)$"))
(with_item value: (as_pattern (call function: [(identifier) (attribute)] @binding.call)
  alias: (as_pattern_target (identifier) @binding.name)))
(assignment
  left: (attribute object: (identifier) attribute: (identifier)) @binding.name
  right: (identifier) @binding.type)
; `engine = self.engine`, `log = self.logger`: what the attribute read holds
(assignment left: (identifier) @binding.name right: (attribute) @binding.type)
; `for x in self.get_params()`: an element of what the loop iterates (not a comprehension's
; `for`, whose name is its own: bound in the function, it would hide the function's own)
(for_statement left: (identifier) @binding.name
  right: [(identifier) (attribute) (call)] @binding.element)
; `self.params: list[Parameter] = ..`: what the collection's elements hold
(assignment
  left: [(identifier) (attribute object: (identifier) attribute: (identifier))] @binding.name
  type: (type [(generic_type) (subscript)] @binding.elements))

; @local: a name a function binds for itself (parameters, assignments, loop and `with`/`except`
; targets). A bare reference to it inside the function means it, never a same-named definition
; outside; `global x` (@global) undoes an assignment's binding.
(function_definition parameters: (parameters [(identifier) @local
  (default_parameter name: (identifier) @local) (typed_default_parameter name: (identifier) @local)]))
(function_definition parameters: (parameters (typed_parameter . (identifier) @local)))
(function_definition parameters: (parameters [(list_splat_pattern (identifier) @local)
  (dictionary_splat_pattern (identifier) @local)]))
(function_definition parameters: (parameters (typed_parameter
  [(list_splat_pattern (identifier) @local) (dictionary_splat_pattern (identifier) @local)])))
; (an assignment's name outside every function and class, in a block at a module's top level,
; is a module variable: extract._add_block_variables)
(assignment left: (identifier) @local.assigned)
(assignment left: [(pattern_list (identifier) @local) (tuple_pattern (identifier) @local)])
(augmented_assignment left: (identifier) @local)
(for_statement left: (identifier) @local)
(for_statement left: [(pattern_list (identifier) @local) (tuple_pattern (identifier) @local)])
(as_pattern_target (identifier) @local)
(global_statement (identifier) @global)
(for_in_clause left: (identifier) @local)
(for_in_clause left: [(pattern_list (identifier) @local) (tuple_pattern (identifier) @local)])
(lambda_parameters [(identifier) @local (default_parameter name: (identifier) @local)])
(named_expression name: (identifier) @local)
