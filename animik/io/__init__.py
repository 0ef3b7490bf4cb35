"""File formats. The only package that deals in degrees, centimetres, Euler-order strings and
the Y-up (BVH, glTF) to Z-up (animik, URDF, MJCF) conversion.

It sees skeletons and motions only (never animation clips, IK or scene documents: the layer
contract in pyproject.toml checks it). Every format reads and writes files and bytes
(``read_bvh`` / ``loads_bvh`` / ``dumps_bvh``, ``read_glb`` / ``loads_glb`` / ``dumps_glb``,
``read_rig`` / ``loads_rig`` / ``dumps_rig``); :mod:`.bvh_compat` makes any motion BVH-writable.
"""
