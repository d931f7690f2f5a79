# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
# swf_lib.sh: shell setup shared by the btl_swf test scripts in this
# directory; sourced after tests/lib/transports.sh and tr_init.

# Set $swfsim to the built simulator; die unless it and btl_swf are built.
swf_require_built() {
    swfsim="$TR_BUILDDIR/swfsim/swfsim"
    [ -x "$swfsim" ] || tr_die "swfsim not built ($swfsim)"
    case " ${TR_TREE_BTLS[*]:-} " in
        *" swf "*) ;;
        *) tr_die "btl_swf not built" ;;
    esac
}
