; JavaScript-only patterns (on top of ecmascript/tags.scm).

(field_definition property: (_) @name) @definition.field
(class_heritage [(identifier) (member_expression)] @reference.extends)

(jsx_opening_element name: [(identifier) (member_expression)] @reference.value)
(jsx_self_closing_element name: [(identifier) (member_expression)] @reference.value)

(field_definition property: (property_identifier) @binding.name
  value: (new_expression constructor: [(identifier) (member_expression)] @binding.type))

(function_declaration parameters: (formal_parameters [(identifier) @local
  (assignment_pattern left: (identifier) @local) (rest_pattern (identifier) @local)]))
(generator_function_declaration parameters: (formal_parameters [(identifier) @local
  (assignment_pattern left: (identifier) @local) (rest_pattern (identifier) @local)]))
(method_definition parameters: (formal_parameters [(identifier) @local
  (assignment_pattern left: (identifier) @local) (rest_pattern (identifier) @local)]))
(variable_declarator value: [(arrow_function parameters: (formal_parameters [(identifier) @local
    (assignment_pattern left: (identifier) @local) (rest_pattern (identifier) @local)]))
  (function_expression parameters: (formal_parameters [(identifier) @local
    (assignment_pattern left: (identifier) @local) (rest_pattern (identifier) @local)]))])
(variable_declarator value: (arrow_function parameter: (identifier) @local))
(arrow_function parameters: (formal_parameters [(identifier) @local
  (assignment_pattern left: (identifier) @local) (rest_pattern (identifier) @local)]))
(function_expression parameters: (formal_parameters [(identifier) @local
  (assignment_pattern left: (identifier) @local) (rest_pattern (identifier) @local)]))

; `this.start = start`: the field holds what the parameter does (typed by its JSDoc)
(assignment_expression
  left: (member_expression object: (this) property: (property_identifier)) @binding.name
  right: (identifier) @binding.type)

; a callback's first parameter (see ecmascript/tags.scm)
(arguments [(arrow_function parameters: (formal_parameters . (identifier) @binding.name))
            (function_expression parameters: (formal_parameters . (identifier) @binding.name))]
  @binding.callback)

; `/** @type {?Node} */ this.outputNode = null;`: the field holds what its JSDoc declares
(expression_statement (assignment_expression
  left: (member_expression object: (this) property: (property_identifier)) @binding.name))
  @binding.documented

; `/** @type {Array<Plane>} */ this.planes = []`: the elements its JSDoc declares
(expression_statement (assignment_expression
  left: (member_expression object: (this) property: (property_identifier)) @binding.name))
  @binding.elements
