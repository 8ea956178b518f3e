; TSX: JSX element names are references to components.

(jsx_opening_element name: [(identifier) (member_expression)] @reference.value)
(jsx_self_closing_element name: [(identifier) (member_expression)] @reference.value)
