/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_ompi_output.c: the diagnostic stream of a component. Open MPI's
 * OPAL_OUTPUT_VERBOSE compiles to nothing unless Open MPI itself is a
 * debug build (Debian's is not), so the components call
 * opal_output_verbose on the stream chosen here.
 */
#include "opal_config.h"

#include "opal/mca/btl/base/base.h"
#include "opal/util/output.h"

#include "tc_ompi.h"

int tc_ompi_output_open(int verbose)
{
    int output;

    if (verbose <= 0) {
        /* btl_base_verbose decides, as for Open MPI's own BTLs */
        return opal_btl_base_framework.framework_output;
    }
    output = opal_output_open(NULL);
    opal_output_set_verbosity(output, verbose);
    return output;
}

void tc_ompi_output_close(int *output)
{
    if (*output >= 0 && *output != opal_btl_base_framework.framework_output) {
        opal_output_close(*output);
    }
    *output = -1;
}
