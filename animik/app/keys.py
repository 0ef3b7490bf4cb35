"""pyglet's key, modifier and mouse-button codes, as plain ints.

The input handlers take pyglet-style arguments but must be importable (and testable) without a
display: importing ``pyglet.window.key`` with no ``DISPLAY`` raises. These values equal
pyglet 2's (``tests/app/test_keys.py`` checks them against pyglet in headless mode).
"""

from __future__ import annotations

# mouse buttons (pyglet.window.mouse)
LEFT, MIDDLE, RIGHT = 1, 2, 4

# modifiers (pyglet.window.key.MOD_*)
MOD_SHIFT, MOD_CTRL, MOD_ALT, MOD_COMMAND = 1, 2, 4, 64

# letters are their lower-case ASCII codes; digits their ASCII codes
A, B, C, D, E, F, G, H, I, J, K, L, M = range(97, 110)
N, O, P, Q, R, S, T, U, V, W, X, Y, Z = range(110, 123)

SPACE = 32
APOSTROPHE, COMMA, MINUS, PERIOD, SLASH = 39, 44, 45, 46, 47
SEMICOLON, EQUAL = 59, 61
BRACKETLEFT, BACKSLASH, BRACKETRIGHT, GRAVE = 91, 92, 93, 96

BACKSPACE, TAB, RETURN, ESCAPE, DELETE = 65288, 65289, 65293, 65307, 65535
HOME, LEFT_ARROW, UP_ARROW, RIGHT_ARROW, DOWN_ARROW = 65360, 65361, 65362, 65363, 65364
PAGEUP, PAGEDOWN, END, INSERT = 65365, 65366, 65367, 65379
NUM_ENTER = 65421
NUM_MULTIPLY, NUM_ADD, NUM_SUBTRACT, NUM_DECIMAL, NUM_DIVIDE = 65450, 65451, 65453, 65454, 65455
NUM_0 = 65456
F1 = 65470  # F1..F12 are consecutive
LSHIFT, RSHIFT, LCTRL, RCTRL = 65505, 65506, 65507, 65508
CAPSLOCK = 65509
LALT, RALT = 65513, 65514
LWINDOWS, LCOMMAND, RCOMMAND = 65515, 65517, 65518
