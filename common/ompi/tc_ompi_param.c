/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_ompi_param.c: MCA parameter registration with one policy for every
 * component (scope READONLY, no flag: values are read once, at init) and
 * the real types (bool, enum) instead of ints.
 */
#include "opal_config.h"
#include <stdio.h>

#include "opal/constants.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/base/mca_base_var_enum.h"

#include "tc_ompi.h"

static int tc_ompi_param_register(const mca_base_component_t *comp, const char *name,
                                  const char *desc, mca_base_var_type_t type,
                                  mca_base_var_enum_t *enumerator, int level, void *storage)
{
    return mca_base_component_var_register(comp, name, desc, type, enumerator, 0, 0,
                                           (mca_base_var_info_lvl_t) level,
                                           MCA_BASE_VAR_SCOPE_READONLY, storage);
}

int tc_ompi_param_int(const mca_base_component_t *comp, const char *name, const char *desc,
                      int level, int *storage, int def)
{
    *storage = def;
    return tc_ompi_param_register(comp, name, desc, MCA_BASE_VAR_TYPE_INT, NULL, level, storage);
}

int tc_ompi_param_uint(const mca_base_component_t *comp, const char *name, const char *desc,
                       int level, unsigned int *storage, unsigned int def)
{
    *storage = def;
    return tc_ompi_param_register(comp, name, desc, MCA_BASE_VAR_TYPE_UNSIGNED_INT, NULL, level,
                                  storage);
}

int tc_ompi_param_prefault(const mca_base_component_t *comp, const char *what,
                           unsigned int *mib)
{
    char desc[512];

    /* Open MPI keeps its own copy of the text */
    (void) snprintf(desc, sizeof(desc),
                    "MiB of %s that each process writes in when it makes them, so that no "
                    "message meets a page for the first time (a page fault costs it 1-3 us); "
                    "beyond it pages come as messages fill them (0: all do)",
                    what);
    return tc_ompi_param_uint(comp, "ofi_prefault", desc, OPAL_INFO_LVL_5, mib, 64);
}

int tc_ompi_param_bool(const mca_base_component_t *comp, const char *name, const char *desc,
                       int level, bool *storage, bool def)
{
    *storage = def;
    return tc_ompi_param_register(comp, name, desc, MCA_BASE_VAR_TYPE_BOOL, NULL, level, storage);
}

int tc_ompi_param_double(const mca_base_component_t *comp, const char *name, const char *desc,
                         int level, double *storage, double def)
{
    *storage = def;
    return tc_ompi_param_register(comp, name, desc, MCA_BASE_VAR_TYPE_DOUBLE, NULL, level, storage);
}

int tc_ompi_param_string(const mca_base_component_t *comp, const char *name, const char *desc,
                         int level, char **storage, const char *def)
{
    /* Open MPI copies the default when it registers the variable */
    *storage = (char *) def;
    return tc_ompi_param_register(comp, name, desc, MCA_BASE_VAR_TYPE_STRING, NULL, level, storage);
}

int tc_ompi_param_enum(const mca_base_component_t *comp, const char *name, const char *desc,
                       int level, const char *enum_name, const mca_base_var_enum_value_t *values,
                       int *storage, int def)
{
    mca_base_var_enum_t *enumerator = NULL;
    int rc;

    *storage = def;
    rc = mca_base_var_enum_create(enum_name, values, &enumerator);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc =
        tc_ompi_param_register(comp, name, desc, MCA_BASE_VAR_TYPE_INT, enumerator, level, storage);
    /* the variable holds its own reference */
    OBJ_RELEASE(enumerator);
    return rc;
}
