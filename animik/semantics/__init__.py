"""What a skeleton's joints are and what its motion does, read from names, topology and poses.

* :mod:`.roles` — canonical semantic roles of a humanoid's joints (``hips``, ``l_hand``,
  ``r_thigh`` ...) by name normalisation, then topology; the character's forward axis.
* :mod:`.contacts` — foot contact phases and the ground height of a motion.

Retargeting (:mod:`animik.retarget`) pairs skeletons through the roles; dynamics checks use the
roles and contacts too, so they sit below both (only kinematics under them).
"""
