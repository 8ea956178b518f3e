; knoxidx complexity for Java (see CONTRIBUTING.md, "Complexity").
[(if_statement) (for_statement) (enhanced_for_statement) (while_statement) (do_statement)
 (catch_clause) (ternary_expression)] @complexity.decision
(switch_label "case" @complexity.decision)
(binary_expression operator: ["&&" "||"] @complexity.decision)
[(if_statement) (for_statement) (enhanced_for_statement) (while_statement) (do_statement)
 (switch_expression) (try_statement) (try_with_resources_statement)] @complexity.nesting
(if_statement alternative: (if_statement) @complexity.flat)
[(line_comment) (block_comment)] @complexity.comment
