; TypeScript-only patterns (on top of ecmascript/tags.scm).


(public_field_definition name: (_) @name type: (type_annotation (_) @def.type)?) @definition.field
; an interface's (or an object type alias's) properties are its fields: `opts.logger.info()`
; follows `logger: Logger`. Not those of an inline object type (a parameter's, a variable's).
(interface_body (property_signature name: (property_identifier) @name
  type: (type_annotation (_) @def.type)?) @definition.field)
(type_alias_declaration value: (object_type (property_signature name: (property_identifier) @name
  type: (type_annotation (_) @def.type)?) @definition.field))
(abstract_class_declaration name: (_) @name) @definition.class
(interface_declaration name: (_) @name) @definition.interface
(type_alias_declaration name: (_) @name value: (_) @def.type) @definition.type
(enum_declaration name: (_) @name) @definition.enum
(abstract_method_signature name: (_) @name) @definition.method
(method_signature name: (_) @name) @definition.method
(internal_module name: [(identifier) (nested_identifier)] @name) @definition.module
(function_signature name: (identifier) @name) @definition.function

(extends_clause value: [(identifier) (member_expression)] @reference.extends)
(implements_clause [(type_identifier) (nested_type_identifier)] @reference.implements)
(implements_clause (generic_type name: [(type_identifier) (nested_type_identifier)] @reference.implements))
(extends_type_clause type: [(type_identifier) (nested_type_identifier)] @reference.extends)
(extends_type_clause type: (generic_type name: [(type_identifier) (nested_type_identifier)] @reference.extends))

(type_annotation [(type_identifier) (nested_type_identifier)] @reference.type)
(type_annotation (generic_type name: [(type_identifier) (nested_type_identifier)] @reference.type))
(type_arguments [(type_identifier) (nested_type_identifier)] @reference.type)
(type_annotation (array_type [(type_identifier) (nested_type_identifier)] @reference.type))
(union_type [(type_identifier) (nested_type_identifier)] @reference.type)
; what an alias names (`type Archive = TaskRepo`, `type Page = Paged<Task>`)
(type_alias_declaration value: [(type_identifier) (nested_type_identifier)] @reference.type)
(type_alias_declaration value: (generic_type name: [(type_identifier) (nested_type_identifier)] @reference.type))

(variable_declarator name: (identifier) @binding.name
  type: (type_annotation [(type_identifier) (nested_type_identifier)] @binding.type))
(variable_declarator name: (identifier) @binding.name
  type: (type_annotation (generic_type name: [(type_identifier) (nested_type_identifier)] @binding.type)))
(required_parameter pattern: (identifier) @binding.name
  type: (type_annotation [(type_identifier) (nested_type_identifier)] @binding.type))
(required_parameter pattern: (identifier) @binding.name
  type: (type_annotation (generic_type name: [(type_identifier) (nested_type_identifier)] @binding.type)))
(optional_parameter pattern: (identifier) @binding.name
  type: (type_annotation [(type_identifier) (nested_type_identifier)] @binding.type))
; A destructured parameter, React's props. The pattern's names are read from the node
; (`@binding.names`, js.bound_names): patterns holding each name and the type beside the pattern
; made the query cursor quadratic in the names (5,000: 1.5 s; inline typed, 5.9 s).
; Typed inline, `function App({ board }: { board: Board })`: each name takes its property's type
; (js.property_types).
(required_parameter
  pattern: (object_pattern) @binding.names
  type: (type_annotation (object_type) @binding.object))
; ... typed by a named type: each name is that type's member (`({ board }: Props)`)
(required_parameter
  pattern: (object_pattern) @binding.names
  type: (type_annotation [(type_identifier) (nested_type_identifier)] @binding.type @binding.member))
(required_parameter
  pattern: (object_pattern) @binding.names
  type: (type_annotation (generic_type
    name: [(type_identifier) (nested_type_identifier)] @binding.type @binding.member)))
; ... and destructured from a value in the body: see ecmascript/tags.scm

; a callback's first parameter, untyped (see ecmascript/tags.scm)
(arguments [(arrow_function parameters: (formal_parameters
              . (required_parameter pattern: (identifier) @binding.name !type)))
            (function_expression parameters: (formal_parameters
              . (required_parameter pattern: (identifier) @binding.name !type)))]
  @binding.callback)

; a function-valued property of an object a function returns cast (`return { batch: () => ..
; } as const`): a method of its result, as without the cast (ecmascript/tags.scm)
(return_statement [(as_expression (object (pair key: (property_identifier) @name
                    value: [(function_expression) (arrow_function)]) @definition.function))
                   (satisfies_expression (object (pair key: (property_identifier) @name
                    value: [(function_expression) (arrow_function)]) @definition.function))])

; a function cast or checked: `const validate: V = ((s, v) => ..) as V`, `.. satisfies V`
(variable_declarator
  name: (identifier) @name
  value: [(as_expression (parenthesized_expression [(arrow_function) (function_expression)]))
          (satisfies_expression (parenthesized_expression [(arrow_function) (function_expression)]))]
  ) @definition.function

; return types, for following `make().run()` (merged with the definitions above)
(function_declaration name: (identifier) @name
  return_type: (type_annotation (_) @def.type)) @definition.function
(method_definition name: (_) @name
  return_type: (type_annotation (_) @def.type)) @definition.method

; constructor parameter properties are fields: `constructor(private repo: Repo)`
(required_parameter (accessibility_modifier) pattern: (identifier) @name
  type: (type_annotation (_) @def.type)) @definition.field
(public_field_definition name: (property_identifier) @binding.name
  value: (new_expression constructor: [(identifier) (member_expression)] @binding.type))
(public_field_definition name: (property_identifier) @binding.name
  value: (call_expression function: [(identifier) (member_expression)] @binding.call))
(assignment_expression
  left: (member_expression object: (this) property: (property_identifier)) @binding.name
  right: (identifier) @binding.type)

; @local: parameters of functions and methods (see ecmascript/tags.scm); `constructor(private
; x: T)` declares a field too, which stays a definition.
(function_declaration parameters: (formal_parameters
  [(required_parameter pattern: (identifier) @local) (optional_parameter pattern: (identifier) @local)]))
(generator_function_declaration parameters: (formal_parameters
  [(required_parameter pattern: (identifier) @local) (optional_parameter pattern: (identifier) @local)]))
(method_definition parameters: (formal_parameters
  [(required_parameter pattern: (identifier) @local) (optional_parameter pattern: (identifier) @local)]))
(variable_declarator value: [(arrow_function parameters: (formal_parameters
    [(required_parameter pattern: (identifier) @local) (optional_parameter pattern: (identifier) @local)]))
  (function_expression parameters: (formal_parameters
    [(required_parameter pattern: (identifier) @local) (optional_parameter pattern: (identifier) @local)]))])
(variable_declarator value: (arrow_function parameter: (identifier) @local))
(function_declaration parameters: (formal_parameters (required_parameter pattern: (rest_pattern (identifier) @local))))
(method_definition parameters: (formal_parameters (required_parameter pattern: (rest_pattern (identifier) @local))))
(arrow_function parameters: (formal_parameters
  [(required_parameter pattern: (identifier) @local) (optional_parameter pattern: (identifier) @local)]))
(function_expression parameters: (formal_parameters
  [(required_parameter pattern: (identifier) @local) (optional_parameter pattern: (identifier) @local)]))

; `const xs: Plane[] = []`: the elements its annotation declares (js.elements_binding)
(variable_declarator name: (identifier) @binding.name
  type: (type_annotation [(array_type) (generic_type)] @binding.elements))
