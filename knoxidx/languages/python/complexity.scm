; knoxidx complexity for Python (see CONTRIBUTING.md, "Complexity"): each @complexity.decision
; adds one to the cyclomatic complexity of the function around it, each @complexity.nesting
; opens a nesting level, and @complexity.comment lines are no lines of code.
[(if_statement) (elif_clause) (for_statement) (while_statement) (except_clause)
 (boolean_operator) (conditional_expression) (for_in_clause) (if_clause) (case_clause)]
  @complexity.decision
[(if_statement) (for_statement) (while_statement) (try_statement) (match_statement)]
  @complexity.nesting
(comment) @complexity.comment
(function_definition body: (block . (expression_statement (string) @complexity.comment)))
