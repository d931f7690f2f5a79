/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_ompi_select.c: does the user's BTL selection (--mca btl LIST) name a
 * component? A component that cannot start says why only when it was
 * asked for by name; btl_swf starts its private simulator only then.
 */
#include "opal_config.h"

#include <string.h>

#include "opal/constants.h"
#include "opal/mca/base/mca_base_var.h"

#include "tc_ompi.h"

tc_ompi_btl_selection_t tc_ompi_btl_list_parse(const char *list, const char *name)
{
    tc_ompi_btl_selection_t sel = {false, true};
    size_t name_len = strlen(name);
    const char *p = list;

    /* no list, or an exclusion list: nothing is named */
    if (NULL == p || '^' == *p) {
        sel.only = false;
        return sel;
    }
    while ('\0' != *p) {
        size_t n = strcspn(p, ",");

        if (n == name_len && 0 == strncmp(p, name, n)) {
            sel.named = true;
        } else if (n > 0 && !(4 == n && 0 == strncmp(p, "self", 4))) {
            sel.only = false;
        }
        p += n;
        if (',' == *p) {
            p++;
        }
    }
    sel.only = sel.only && sel.named;
    return sel;
}

tc_ompi_btl_selection_t tc_ompi_btl_selection(const char *name)
{
    const char **value = NULL;
    int idx = mca_base_var_find("opal", "btl", NULL, NULL);

    if (idx < 0 || OPAL_SUCCESS != mca_base_var_get_value(idx, &value, NULL, NULL) ||
        NULL == value) {
        return tc_ompi_btl_list_parse(NULL, name);
    }
    return tc_ompi_btl_list_parse(*value, name);
}
