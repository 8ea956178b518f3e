; knoxidx complexity for Rust (see CONTRIBUTING.md, "Complexity"): a match adds one per arm
; after its first; `?` and `let ... else` return early, so each is a decision.
[(if_expression) (for_expression) (while_expression) (try_expression)] @complexity.decision
(let_declaration alternative: (_) @complexity.decision)
(match_block (match_arm) . (match_arm) @complexity.decision)
(binary_expression operator: ["&&" "||"] @complexity.decision)
; a macro's arguments are tokens, not expressions: `assert!(a && b)` short-circuits all the same
(token_tree ["&&" "||"] @complexity.decision)
[(if_expression) (for_expression) (while_expression) (loop_expression) (match_expression)]
  @complexity.nesting
(else_clause (if_expression) @complexity.flat)
[(line_comment) (block_comment)] @complexity.comment
