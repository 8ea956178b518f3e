; knoxidx tags shared by JavaScript, TypeScript and TSX (valid in all three grammars).

(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(class_declaration name: (_) @name) @definition.class
(class name: (_) @name) @definition.class
(method_definition name: (_) @name) @definition.method
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function) (class)]) @definition.function
; a function-valued property of an object literal a variable holds (`const Cache = { add:
; function (key) {..} }`): a method of it, as the shorthand `get(key) {..}` is
(variable_declarator value: (object (pair key: (property_identifier) @name
  value: [(function_expression) (arrow_function)]) @definition.function))
; ... or a function returns (`return { add: function (key) {..} }`: see js.documented_types)
(return_statement (object (pair key: (property_identifier) @name
  value: [(function_expression) (arrow_function)]) @definition.function))
; the same in parentheses: `const f = (function () {..})`
(variable_declarator
  name: (identifier) @name
  value: (parenthesized_expression [(arrow_function) (function_expression)])) @definition.function

(program (lexical_declaration (variable_declarator name: (identifier) @name) @definition.constant))
(program (variable_declaration (variable_declarator name: (identifier) @name) @definition.variable))
(program (export_statement declaration:
  (lexical_declaration (variable_declarator name: (identifier) @name) @definition.constant)))
(program (export_statement declaration:
  (variable_declaration (variable_declarator name: (identifier) @name) @definition.variable)))

; a method a constructor assigns: `this.clear = function () {..}` (see js RULES.constructor_members)
(expression_statement (assignment_expression
  left: (member_expression object: (this) property: (property_identifier) @name)
  right: [(function_expression) (arrow_function)]) @definition.function)

; CommonJS: exports.name = function () {}
(expression_statement (assignment_expression
  left: (member_expression object: [(identifier) (member_expression)] @_exports
                           property: (property_identifier) @name)
  right: [(function_expression) (arrow_function)]) @definition.function
  (#match? @_exports "^(module\\.)?exports$"))

(call_expression function: [(identifier) (member_expression)] @reference.call)
; `super(...)` in a constructor: the base class's (a call of the class, as `new T()` is)
(call_expression function: (super) @reference.call)
(new_expression constructor: [(identifier) (member_expression)] @reference.new)

(arguments (identifier) @reference.value)
(arguments (member_expression) @reference.value)
(variable_declarator value: (identifier) @reference.value)
(assignment_expression right: (identifier) @reference.value)
(return_statement (identifier) @reference.value)
(object (shorthand_property_identifier) @reference.value)
(pair value: (identifier) @reference.value)

; what an expression reads: operands, conditions, indexes, elements, interpolations
(binary_expression [(identifier) (member_expression)] @reference.value)  ; left or right
(unary_expression argument: [(identifier) (member_expression)] @reference.value)
(ternary_expression [(identifier) (member_expression)] @reference.value)
(subscript_expression object: (identifier) @reference.value)
(subscript_expression index: [(identifier) (member_expression)] @reference.value)
(array [(identifier) (member_expression)] @reference.value)
(spread_element (identifier) @reference.value)
(template_substitution [(identifier) (member_expression)] @reference.value)
(augmented_assignment_expression right: [(identifier) (member_expression)] @reference.value)
(parenthesized_expression [(identifier) (member_expression)] @reference.value)
(return_statement (member_expression) @reference.value)

(import_statement) @import
(export_statement source: (_)) @import
(export_statement (export_clause)) @import
(export_statement value: (identifier)) @import
(variable_declarator
  value: (call_expression function: (identifier) @_require arguments: (arguments (string)))
  (#eq? @_require "require")) @import
; `const z = await import("./m.js")`: the module's namespace, as `import * as z` binds it
(variable_declarator value: (await_expression (call_expression function: (import)
  arguments: (arguments (string))))) @import
(expression_statement (assignment_expression
  left: (member_expression object: (identifier) @_module property: (property_identifier) @_exports)
  right: [(object) (identifier) (class name: (_))])
  (#eq? @_module "module") (#eq? @_exports "exports")) @import

(variable_declarator name: (identifier) @binding.name
  value: (new_expression constructor: [(identifier) (member_expression)] @binding.type))
(variable_declarator name: (identifier) @binding.name
  value: (call_expression function: [(identifier) (member_expression)] @binding.call))
(variable_declarator name: (identifier) @binding.name
  value: (await_expression (call_expression function: [(identifier) (member_expression)] @binding.call)))
; destructured from a value in the body: `const { board } = props` (props: Props), `const {
; state, utils } = this`: each name is that value's member
(variable_declarator
  name: (object_pattern) @binding.names
  value: [(identifier) (this) (member_expression)] @binding.type @binding.member)
; ... or from a call's result (`const { status, ctx } = this._processInputParams(input)`):
; each name is that member of what the called function returns
(variable_declarator
  name: (object_pattern) @binding.names
  value: (call_expression function: [(identifier) (member_expression)] @binding.call) @binding.member)
; an object of spreads (`const z = { ...schemas, ...checks }`): what each value spread holds
; (js.declared_binding_type reads them)
(variable_declarator name: (identifier) @binding.name value: (object (spread_element)) @binding.type)
; the parameter of a function passed to a call (`doc.indented((d) => ..)`, `xs.forEach(x =>
; ..)`): what the called function passes it (js.callback_binding); the parenthesized forms
; are in the per-language files
(arguments (arrow_function parameter: (identifier) @binding.name) @binding.callback)
; a copy of a name (`const point = optionalTarget`): what that name holds
(variable_declarator name: (identifier) @binding.name value: (identifier) @binding.copy)
; a copy of a field or a module's member (`const geometry = this.geometry`): of its type
(variable_declarator name: (identifier) @binding.name value: (member_expression) @binding.type)
; `const scope = this`: the receiver, for the functions nested in the method to call through
(variable_declarator name: (identifier) @binding.name value: (this) @binding.type)
; a local declared with no value (`let x;`, `let x = null`) holds what it is assigned later
; (`x = new T()`, `x = f()`, `x = this.y`), as TypeScript's evolving `let` does; a local
; declared with a value keeps that value's type (@binding.assigned: read where @unset)
(variable_declarator name: (identifier) @unset !value)
(variable_declarator name: (identifier) @unset value: [(null) (undefined)])
(assignment_expression left: (identifier) @binding.name
  right: (new_expression constructor: [(identifier) (member_expression)] @binding.type))
  @binding.assigned
(assignment_expression left: (identifier) @binding.name
  right: (call_expression function: [(identifier) (member_expression)] @binding.call))
  @binding.assigned
(assignment_expression left: (identifier) @binding.name
  right: (member_expression) @binding.type) @binding.assigned
; either value of a conditional (`x = a ? new A() : new B()`): each a binding of its own
(variable_declarator name: (identifier) @binding.name
  value: (ternary_expression (new_expression constructor: [(identifier) (member_expression)] @binding.type)))
(variable_declarator name: (identifier) @binding.name
  value: (ternary_expression (call_expression function: [(identifier) (member_expression)] @binding.call)))
(assignment_expression left: (identifier) @binding.name
  right: (ternary_expression (new_expression constructor: [(identifier) (member_expression)] @binding.type)))
  @binding.assigned
(assignment_expression left: (identifier) @binding.name
  right: (ternary_expression (call_expression function: [(identifier) (member_expression)] @binding.call)))
  @binding.assigned
(assignment_expression
  left: (member_expression object: (this) property: (property_identifier)) @binding.name
  right: (new_expression constructor: [(identifier) (member_expression)] @binding.type))
(assignment_expression
  left: (member_expression object: (this) property: (property_identifier)) @binding.name
  right: (call_expression function: [(identifier) (member_expression)] @binding.call))
(export_statement declaration: (_)) @import

; @local: a name a function binds for itself (local `const`/`let`/`var`, loop and catch
; variables; parameters are in the per-language files): a bare reference to it inside the
; function never means a same-named definition outside.
(lexical_declaration (variable_declarator name: (identifier) @local))
(variable_declaration (variable_declarator name: (identifier) @local))
(for_in_statement left: (identifier) @local)
(catch_clause parameter: (identifier) @local)
(arrow_function parameter: (identifier) @local)

; an element of a collection (js.element_binding): `const child = children[i]`, `for (const x
; of xs)`, `const [ first, second ] = xs`
(variable_declarator name: (identifier) @binding.name value: (subscript_expression) @binding.element)
(for_in_statement left: (identifier) @binding.name operator: "of" right: (_) @binding.element)
(variable_declarator name: (array_pattern (identifier) @binding.name)
  value: [(identifier) (member_expression) (call_expression)] @binding.element)
; what a collection's elements hold (js.elements_binding): the objects an array literal
; creates, or one created and stored or pushed into it
(assignment_expression
  left: (subscript_expression object: (identifier) @binding.name)
  right: (new_expression) @binding.elements)
(variable_declarator name: (identifier) @binding.name
  value: (array (new_expression)) @binding.elements)
(assignment_expression
  left: (member_expression object: (this) property: (property_identifier)) @binding.name
  right: (array (new_expression)) @binding.elements)
(call_expression
  function: (member_expression
    object: [(identifier) (member_expression object: (this) property: (property_identifier))]
      @binding.name
    property: (property_identifier) @_push)
  arguments: (arguments . (new_expression)) @binding.elements
  (#eq? @_push "push"))

; what a function declaring no return type returns (js.returned_value): each `return`, and
; what makes it return no value of its own read (a generator's `yield`, an `async` function)
(return_statement) @returned
(yield_expression) @returned
(function_declaration "async" @returned)
(function_expression "async" @returned)
(arrow_function "async" @returned)
(method_definition "async" @returned)
