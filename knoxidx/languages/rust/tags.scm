; knoxidx tags for Rust.

(function_item name: (identifier) @name return_type: (_)? @def.type) @definition.function
(function_signature_item name: (identifier) @name return_type: (_)? @def.type) @definition.function
(struct_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(union_item name: (type_identifier) @name) @definition.struct
(trait_item name: (type_identifier) @name) @definition.trait
(type_item name: (type_identifier) @name type: (_)? @def.type) @definition.type
(const_item name: (identifier) @name type: (_)? @def.type) @definition.constant
(static_item name: (identifier) @name type: (_)? @def.type) @definition.variable
(mod_item name: (identifier) @name body: (declaration_list)) @definition.module
(macro_definition name: (identifier) @name) @definition.function
(field_declaration name: (field_identifier) @name type: (_) @def.type) @definition.field

(impl_item trait: (_)? @impl.trait type: (_) @impl.type) @impl

(call_expression function: [(identifier) (scoped_identifier) (field_expression)] @reference.call)
(call_expression function: (generic_function function: [(identifier) (scoped_identifier) (field_expression)] @reference.call))
(macro_invocation macro: [(identifier) (scoped_identifier)] @reference.call)
; `Trait::method(&x, ..)`: the first argument is the receiver (see hooks.call_arguments)
(call_expression function: (scoped_identifier) @arity.name arguments: (arguments) @arity)
(struct_expression name: [(type_identifier) (scoped_type_identifier)] @reference.new)

(trait_item bounds: (trait_bounds [(type_identifier) (scoped_type_identifier)] @reference.extends))

(parameter type: [(type_identifier) (scoped_type_identifier)] @reference.type)
(reference_type type: [(type_identifier) (scoped_type_identifier)] @reference.type)
(generic_type type: [(type_identifier) (scoped_type_identifier)] @reference.type)
(type_arguments [(type_identifier) (scoped_type_identifier)] @reference.type)
(function_item return_type: [(type_identifier) (scoped_type_identifier)] @reference.type)
(field_declaration type: [(type_identifier) (scoped_type_identifier)] @reference.type)
(let_declaration type: [(type_identifier) (scoped_type_identifier)] @reference.type)
(trait_bounds [(type_identifier) (scoped_type_identifier)] @reference.type)
(dynamic_type trait: [(type_identifier) (scoped_type_identifier)] @reference.type)  ; `&dyn Trait`
(abstract_type trait: [(type_identifier) (scoped_type_identifier)] @reference.type)  ; `impl Trait`

(arguments [(identifier) (scoped_identifier) (field_expression)] @reference.value)
(let_declaration value: [(identifier) (scoped_identifier) (field_expression)] @reference.value)

; what an expression reads (a field too: `self.x`, `&config.owner`): operands, conditions,
; indexes, elements, returned and assigned values
(binary_expression [(identifier) (scoped_identifier) (field_expression)] @reference.value)  ; left or right
(unary_expression [(identifier) (scoped_identifier) (field_expression)] @reference.value)
(index_expression [(identifier) (scoped_identifier) (field_expression)] @reference.value)
(array_expression [(identifier) (scoped_identifier) (field_expression)] @reference.value)
(return_expression [(identifier) (scoped_identifier) (field_expression)] @reference.value)
(assignment_expression right: [(identifier) (scoped_identifier) (field_expression)] @reference.value)
(compound_assignment_expr right: [(identifier) (scoped_identifier) (field_expression)] @reference.value)
(field_initializer value: [(identifier) (scoped_identifier) (field_expression)] @reference.value)
(if_expression condition: [(identifier) (scoped_identifier) (field_expression)] @reference.value)
(while_expression condition: [(identifier) (scoped_identifier) (field_expression)] @reference.value)
(match_expression value: [(identifier) (scoped_identifier) (field_expression)] @reference.value)
(tuple_expression [(identifier) (scoped_identifier) (field_expression)] @reference.value)
(reference_expression value: [(identifier) (scoped_identifier) (field_expression)] @reference.value)

(use_declaration) @import
(mod_item name: (identifier) !body) @import
(extern_crate_declaration) @import

(let_declaration pattern: (identifier) @binding.name
  type: [(type_identifier) (scoped_type_identifier) (generic_type) (reference_type)] @binding.type)
(let_declaration pattern: (identifier) @binding.name
  value: (call_expression function: [(identifier) (scoped_identifier) (field_expression)] @binding.call) @_value
  (#not-match? @_value "^(?:(?:std|alloc)::\\w+::)?(?:Arc|Rc|Box)::new\\(\\s*[\\w:]+\\s*\\("))
; `let sem = Arc::new(Semaphore::new(0))`: an `Arc`, `Rc` or `Box` derefs to the value it holds,
; whose methods `sem.acquire()` calls (the call's own binding above left out for it)
(let_declaration pattern: (identifier) @binding.name
  value: (call_expression
    function: (scoped_identifier) @_wrapper
    arguments: (arguments .
      (call_expression function: [(identifier) (scoped_identifier) (field_expression)] @binding.call) .))
  (#match? @_wrapper "^(?:(?:std|alloc)::\\w+::)?(?:Arc|Rc|Box)::new$"))
(let_declaration pattern: (identifier) @binding.name
  value: (struct_expression name: [(type_identifier) (scoped_type_identifier)] @binding.type))
(let_declaration pattern: (identifier) @binding.name
  value: (try_expression (call_expression function: [(identifier) (scoped_identifier) (field_expression)] @binding.call)))
(let_declaration pattern: (identifier) @binding.name
  value: (await_expression (call_expression function: [(identifier) (scoped_identifier) (field_expression)] @binding.call)))
; `let c = connect().await?`: what the async fn's `Result` holds
(let_declaration pattern: (identifier) @binding.name
  value: (try_expression (await_expression (call_expression function: [(identifier) (scoped_identifier) (field_expression)] @binding.call))))
; `let (tx, rx) = mpsc::channel(8)`: each name of the type at its place in the tuple the call
; returns (`@binding.result`: the element whose place is the result's, the first's too, so that
; a later `let tx = Arc::new(tx)` is seen to shadow it; `mut rx` stands for rx;
; `mpsc::channel::<i32>(1)` is mpsc::channel's)
(let_declaration
  pattern: (tuple_pattern . [(identifier) @binding.name @binding.result
                             (mut_pattern (identifier) @binding.name) @binding.result])
  value: (call_expression
    function: [(identifier) (scoped_identifier) (field_expression) (generic_function)] @binding.call))
(let_declaration
  pattern: (tuple_pattern . (_) . [(identifier) @binding.name @binding.result
                                   (mut_pattern (identifier) @binding.name) @binding.result])
  value: (call_expression
    function: [(identifier) (scoped_identifier) (field_expression) (generic_function)] @binding.call))
(parameter pattern: (identifier) @binding.name
  type: [(type_identifier) (scoped_type_identifier) (generic_type) (reference_type)] @binding.type)
; `v: impl Fold`, `v: impl Read + Write` (`dyn` stands behind `&` or `Box<>`); apart from the
; alternatives above, where they cost an eighth more query time
(parameter pattern: (identifier) @binding.name type: (abstract_type) @binding.type)
(parameter pattern: (identifier) @binding.name type: (bounded_type) @binding.type)
; `if let Some(x) = f()`, `while let Some(x) = it.next()`, `let Ok(x) = f() else {..}` and a
; `match f()`'s `Some(x) =>` arm: x holds what the call's `Option`/`Result` holds, read as
; `let x = f()?` reads it (`Err(e)` binds no value of the call's type)
(let_condition
  pattern: (tuple_struct_pattern type: (identifier) @_holds . [(identifier) @binding.name
    (mut_pattern (identifier) @binding.name) (ref_pattern (identifier) @binding.name)] .)
  value: [(call_expression function: [(identifier) (scoped_identifier) (field_expression)] @binding.call)
          (try_expression (call_expression function: [(identifier) (scoped_identifier) (field_expression)] @binding.call))
          (await_expression (call_expression function: [(identifier) (scoped_identifier) (field_expression)] @binding.call))
          (try_expression (await_expression (call_expression function: [(identifier) (scoped_identifier) (field_expression)] @binding.call)))]
  (#match? @_holds "^(?:Some|Ok)$"))
(let_declaration
  pattern: (tuple_struct_pattern type: (identifier) @_holds . [(identifier) @binding.name
    (mut_pattern (identifier) @binding.name) (ref_pattern (identifier) @binding.name)] .)
  value: [(call_expression function: [(identifier) (scoped_identifier) (field_expression)] @binding.call)
          (try_expression (call_expression function: [(identifier) (scoped_identifier) (field_expression)] @binding.call))
          (await_expression (call_expression function: [(identifier) (scoped_identifier) (field_expression)] @binding.call))
          (try_expression (await_expression (call_expression function: [(identifier) (scoped_identifier) (field_expression)] @binding.call)))]
  (#match? @_holds "^(?:Some|Ok)$"))
; `if let Some(x) = &self.waker`, `if let Some(w) = w`: x is the element of the `Option` read
; where it is declared (see element_binding)
(let_condition
  pattern: (tuple_struct_pattern type: (identifier) @_holds . [(identifier) @binding.name
    (mut_pattern (identifier) @binding.name) (ref_pattern (identifier) @binding.name)] .)
  value: [(identifier) (field_expression) (reference_expression)] @binding.element
  (#eq? @_holds "Some"))
(let_declaration
  pattern: (tuple_struct_pattern type: (identifier) @_holds . [(identifier) @binding.name
    (mut_pattern (identifier) @binding.name) (ref_pattern (identifier) @binding.name)] .)
  value: [(identifier) (field_expression) (reference_expression)] @binding.element
  (#eq? @_holds "Some"))
(match_expression
  value: [(identifier) (field_expression) (reference_expression)] @binding.element
  body: (match_block (match_arm pattern: (match_pattern
    (tuple_struct_pattern type: (identifier) @_holds . [(identifier) @binding.name
      (mut_pattern (identifier) @binding.name) (ref_pattern (identifier) @binding.name)] .))))
  (#eq? @_holds "Some"))
(match_expression
  value: [(call_expression function: [(identifier) (scoped_identifier) (field_expression)] @binding.call)
          (try_expression (call_expression function: [(identifier) (scoped_identifier) (field_expression)] @binding.call))
          (await_expression (call_expression function: [(identifier) (scoped_identifier) (field_expression)] @binding.call))
          (try_expression (await_expression (call_expression function: [(identifier) (scoped_identifier) (field_expression)] @binding.call)))]
  body: (match_block (match_arm pattern: (match_pattern
    (tuple_struct_pattern type: (identifier) @_holds . [(identifier) @binding.name
      (mut_pattern (identifier) @binding.name) (ref_pattern (identifier) @binding.name)] .))))
  (#match? @_holds "^(?:Some|Ok)$"))
; `if let Type::Verbatim(ts) = ty`, `E::V(_, x) =>`: each name holds the payload at its place in
; the variant (or tuple struct), not what a name of it bound around it holds (see
; declared_binding_type: the variant's path and the place, read where the variant is declared)
(let_condition
  pattern: (tuple_struct_pattern type: (_) @_variant [(identifier) @binding.name @binding.type
    (mut_pattern (identifier) @binding.name) @binding.type
    (ref_pattern (identifier) @binding.name) @binding.type
    (ref_pattern (mut_pattern (identifier) @binding.name)) @binding.type])
  (#not-match? @_variant "^(?:Some|Ok)$"))
(match_pattern
  (tuple_struct_pattern type: (_) @_variant [(identifier) @binding.name @binding.type
    (mut_pattern (identifier) @binding.name) @binding.type
    (ref_pattern (identifier) @binding.name) @binding.type
    (ref_pattern (mut_pattern (identifier) @binding.name)) @binding.type])
  (#not-match? @_variant "^(?:Some|Ok)$"))
; `E::S { a, .. } =>`, `if let E::S { a: x, .. } = e`: each name holds the variant's field
(let_condition
  pattern: (struct_pattern (field_pattern name: (shorthand_field_identifier) @binding.name) @binding.type))
(let_condition
  pattern: (struct_pattern (field_pattern pattern: [(identifier) @binding.name
    (mut_pattern (identifier) @binding.name) (ref_pattern (identifier) @binding.name)
    (ref_pattern (mut_pattern (identifier) @binding.name))]) @binding.type))
(match_pattern
  (struct_pattern (field_pattern name: (shorthand_field_identifier) @binding.name) @binding.type))
(match_pattern
  (struct_pattern (field_pattern pattern: [(identifier) @binding.name
    (mut_pattern (identifier) @binding.name) (ref_pattern (identifier) @binding.name)
    (ref_pattern (mut_pattern (identifier) @binding.name))]) @binding.type))
; `let w: Option<Waker> = ..`, `let xs: Vec<Task> = ..`: what it holds, for `if let Some(w) = w`
; and `for t in xs` (see elements_binding)
(let_declaration pattern: (identifier) @binding.name type: (generic_type) @binding.elements)
; `for book in shelf.books()`: book is an element of what the call returns
(for_expression pattern: (identifier) @binding.name value: (_) @binding.element)

; @local: a name a function binds for itself (parameters, `let`, `for` and `if let` patterns'
; plain names): a bare reference to it inside the function never means an item. (`mut x` is
; the parameter's or the let's own `mutable_specifier`: its pattern is still the name.)
(function_item parameters: (parameters (parameter pattern: (identifier) @local)))
(let_declaration pattern: (identifier) @local)
(for_expression pattern: (identifier) @local)
(closure_parameters (identifier) @local)
(closure_parameters (parameter pattern: (identifier) @local))
(let_declaration pattern: (tuple_pattern (identifier) @local))
(let_condition pattern: (tuple_struct_pattern (identifier) @local))
(match_pattern (identifier) @local)
(match_pattern (tuple_struct_pattern (identifier) @local))
