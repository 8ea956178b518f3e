; knoxidx complexity for Go (see CONTRIBUTING.md, "Complexity"). @complexity.scope: a func
; literal, whose decisions are its own, not its enclosing function's.
[(if_statement) (for_statement) (expression_case) (type_case) (communication_case)]
  @complexity.decision
(binary_expression operator: ["&&" "||"] @complexity.decision)
[(if_statement) (for_statement) (expression_switch_statement) (type_switch_statement)
 (select_statement)] @complexity.nesting
(if_statement alternative: (if_statement) @complexity.flat)
(comment) @complexity.comment
(func_literal) @complexity.scope
