"""File formats. The only package that deals in degrees, centimetres, Euler-order strings and
the Y-up (BVH, glTF) to Z-up (animik, URDF, MJCF) conversion."""
