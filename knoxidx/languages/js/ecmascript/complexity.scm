; knoxidx complexity shared by JavaScript, TypeScript and TSX (see CONTRIBUTING.md,
; "Complexity"). @complexity.scope: a function with no definition of its own (a callback),
; whose decisions are its own, not its enclosing function's.
[(if_statement) (for_statement) (for_in_statement) (while_statement) (do_statement)
 (catch_clause) (switch_case) (ternary_expression)] @complexity.decision
(binary_expression operator: ["&&" "||" "??"] @complexity.decision)
[(if_statement) (for_statement) (for_in_statement) (while_statement) (do_statement)
 (switch_statement) (try_statement)] @complexity.nesting
(else_clause (if_statement) @complexity.flat)
(comment) @complexity.comment
[(function_expression) (arrow_function) (generator_function)] @complexity.scope
