; knoxidx tags for Java.

(package_declaration [(scoped_identifier) (identifier)] @package)

(class_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(record_declaration name: (identifier) @name) @definition.class
(annotation_type_declaration name: (identifier) @name) @definition.interface
(method_declaration type: (_) @def.type name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method
; an annotation type's element (`String name() default "";`): a method of it without a body
(annotation_type_element_declaration type: (_) @def.type name: (identifier) @name) @definition.method
(field_declaration type: (_) @def.type declarator: (variable_declarator name: (identifier) @name)) @definition.field
; an enum constant is of its enum's type: `YEAR.checkValidValue(y)` calls ChronoField's method
(enum_declaration name: (identifier) @def.type
  body: (enum_body (enum_constant name: (identifier) @name) @definition.constant))
; an anonymous class (`new T() {..}`, an enum constant's body): a class of its own, named as
; javac names it (`Outer$1`), whose base is the type its `new` or its enum names
(object_creation_expression type: [(type_identifier) (scoped_type_identifier) (generic_type)] @def.type @name
  (class_body) @definition.anonymous)
(enum_declaration name: (identifier) @def.type
  body: (enum_body (enum_constant name: (identifier) @name body: (class_body) @definition.anonymous)))
; an interface's or annotation type's field (`int X = 1;`): public static final without saying so
(constant_declaration type: (_) @def.type declarator: (variable_declarator name: (identifier) @name)) @definition.constant

(method_invocation object: (_) @receiver name: (identifier) @reference.call)
(method_invocation !object name: (identifier) @reference.call)
; `super(...)` in a constructor: the base class's (a call of the class, as `new T()` is, and
; of its constructor); `this(...)`: another constructor of the class
(explicit_constructor_invocation constructor: [(super) (this)] @reference.call)
(explicit_constructor_invocation constructor: [(super) (this)] @arity.name
  arguments: (argument_list) @arity)
; how many arguments a call passes: which overloads of the method it can call
(method_invocation name: (identifier) @arity.name arguments: (argument_list) @arity)
(object_creation_expression . "new" type: [(type_identifier) (scoped_type_identifier)] @reference.new)
(object_creation_expression . "new"
  type: (generic_type [(type_identifier) (scoped_type_identifier)] @reference.new))
; `outer.new Inner()`: the inner class as a member of what `outer` holds
(object_creation_expression . (_) @receiver "new"
  type: [(type_identifier) (generic_type (type_identifier))] @reference.new)

(superclass [(type_identifier) (scoped_type_identifier)] @reference.extends)
(superclass (generic_type [(type_identifier) (scoped_type_identifier)] @reference.extends))
(super_interfaces (type_list [(type_identifier) (scoped_type_identifier)] @reference.implements))
(super_interfaces (type_list (generic_type [(type_identifier) (scoped_type_identifier)] @reference.implements)))
(extends_interfaces (type_list [(type_identifier) (scoped_type_identifier)] @reference.extends))
(extends_interfaces (type_list (generic_type [(type_identifier) (scoped_type_identifier)] @reference.extends)))

(formal_parameter type: [(type_identifier) (scoped_type_identifier)] @reference.type)
(method_declaration type: [(type_identifier) (scoped_type_identifier)] @reference.type)
(annotation_type_element_declaration type: [(type_identifier) (scoped_type_identifier)] @reference.type)
(field_declaration type: [(type_identifier) (scoped_type_identifier)] @reference.type)
(constant_declaration type: [(type_identifier) (scoped_type_identifier)] @reference.type)
(local_variable_declaration type: [(type_identifier) (scoped_type_identifier)] @reference.type)
(type_arguments [(type_identifier) (scoped_type_identifier)] @reference.type)
(generic_type [(type_identifier) (scoped_type_identifier)] @reference.type)
(catch_type [(type_identifier) (scoped_type_identifier)] @reference.type)
(throws [(type_identifier) (scoped_type_identifier)] @reference.type)

(argument_list [(identifier) (field_access)] @reference.value)
; `Item::describe`, `this::register`: the method (its class qualifier a reference as in any
; path); `Item::new`, with no method named: the class
(method_reference . [(identifier) (field_access) (this) (super)] . (identifier) .) @reference.value
(method_reference . [(identifier) (field_access) (type_identifier)] @reference.value .)
; `@DefinedBy(value = X)` reads the annotation type's element `value`
(annotation name: (_) @receiver
  arguments: (annotation_argument_list (element_value_pair key: (identifier) @reference.value)))

; what an expression reads: operands, conditions, indexes, elements, returned and assigned values
(binary_expression [(identifier) (field_access)] @reference.value)  ; left or right
(unary_expression operand: [(identifier) (field_access)] @reference.value)
(ternary_expression [(identifier) (field_access)] @reference.value)
(array_access array: [(identifier) (field_access)] @reference.value)
(array_access index: [(identifier) (field_access)] @reference.value)
(array_initializer [(identifier) (field_access)] @reference.value)
(return_statement [(identifier) (field_access)] @reference.value)
(assignment_expression right: [(identifier) (field_access)] @reference.value)
(variable_declarator value: [(identifier) (field_access)] @reference.value)
(parenthesized_expression [(identifier) (field_access)] @reference.value)

(import_declaration) @import

(local_variable_declaration
  type: [(type_identifier) (scoped_type_identifier) (generic_type)] @binding.type
  declarator: (variable_declarator name: (identifier) @binding.name)
  (#not-eq? @binding.type "var"))
(local_variable_declaration
  declarator: (variable_declarator name: (identifier) @binding.name
    value: (object_creation_expression type: [(type_identifier) (scoped_type_identifier) (generic_type)] @binding.type)))
(formal_parameter type: [(type_identifier) (scoped_type_identifier) (generic_type)] @binding.type
  name: (identifier) @binding.name)
; primitives too: an argument's type picks among overloads
(local_variable_declaration
  type: [(integral_type) (floating_point_type) (boolean_type)] @binding.type
  declarator: (variable_declarator name: (identifier) @binding.name))
(formal_parameter type: [(integral_type) (floating_point_type) (boolean_type)] @binding.type
  name: (identifier) @binding.name)
(enhanced_for_statement type: [(type_identifier) (scoped_type_identifier) (generic_type)] @binding.type
  name: (identifier) @binding.name
  (#not-eq? @binding.type "var"))
; a resource: `try (Reader r = open())` binds r, a Reader, for the try
(resource type: [(type_identifier) (scoped_type_identifier) (generic_type)] @binding.type
  name: (identifier) @binding.name
  (#not-eq? @binding.type "var"))
; a caught exception of one type: `catch (Types.Err ex)` binds ex, a Types.Err (not `A | B ex`)
(catch_formal_parameter
  (catch_type . [(type_identifier) (scoped_type_identifier)] @binding.type .)
  name: (identifier) @binding.name)
; a pattern variable: `x instanceof T t` binds t, a T
(instanceof_expression right: [(type_identifier) (scoped_type_identifier) (generic_type)] @binding.type
  name: (identifier) @binding.name)

; a lambda's untyped parameter: what the method it is passed to, or the declared type it is a
; value of, passes it (java.callback_binding)
(lambda_expression parameters: (identifier) @binding.name @binding.callback)
(lambda_expression parameters: (inferred_parameters (identifier) @binding.name @binding.callback))

; @local: a name a method binds for itself (parameters, local variables, loop and catch
; variables): a bare reference to it inside the method never means a field or a type.
(method_declaration parameters: (formal_parameters [(formal_parameter name: (identifier) @local)
  (spread_parameter (variable_declarator name: (identifier) @local))]))
(constructor_declaration parameters: (formal_parameters [(formal_parameter name: (identifier) @local)
  (spread_parameter (variable_declarator name: (identifier) @local))]))
(local_variable_declaration declarator: (variable_declarator name: (identifier) @local))
(enhanced_for_statement name: (identifier) @local)
(catch_formal_parameter name: (identifier) @local)
(instanceof_expression name: (identifier) @local)
(resource name: (identifier) @local)
(lambda_expression parameters: (identifier) @local)
(lambda_expression parameters: (inferred_parameters (identifier) @local))
(lambda_expression parameters: (formal_parameters (formal_parameter name: (identifier) @local)))
