#!/usr/bin/env python3
# gen_fortran.py - generate Loom's Fortran bindings from the C API description.
#
# Input: include/mpi.h (the XM_API_ prototypes: which functions exist; the #define
# constants; the MPI_Status fields) and bindings/fortran.api (how each C argument kind
# looks in Fortran).  Output, in the directory given by -o:
#   mpi_fortran.c  the C layer of libmpifort: for every function MPI_X an mpi_x_ (and
#                  pmpi_x_, and the private loomf_x_ used by mpi_f08) taking Fortran's
#                  by-reference arguments and hidden CHARACTER lengths, translating
#                  sentinels (MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE...), strings
#                  and attribute values, then calling the C function;
#   mpif.h         constants, sentinels (common blocks), function types: fixed and free
#                  form;
#   mpi.f90        module mpi: the same plus explicit interfaces (choice buffers through
#                  gfortran's NO_ARG_CHECK, i.e. ignore type/kind/rank);
#   mpi_f08.f90    module mpi_f08: TYPE(MPI_Comm) etc., TYPE(MPI_Status), optional
#                  ierror, assumed-rank TYPE(*) buffers; each MPI_X_f08 is a thin module
#                  procedure calling loomf_x_.
# It runs at build time (mpi/Makefile), so a function added to mpi.h gets its Fortran
# binding with the next build; an argument kind not described in fortran.api makes the
# function skipped with a warning (and a comment in the output) instead of failing.
# Usage: gen_fortran.py -i include/mpi.h -a bindings/fortran.api -o OUTDIR
# One file on purpose: the four outputs share the argument-kind table below.
import os, re, sys

HANDLES = ['Comm', 'Group', 'Datatype', 'Op', 'Errhandler', 'Request', 'Message', 'Info',
           'Win', 'File']   # File: a pointer in C, MPI_File_c2f's index in Fortran
# MPI-4 sessions: MPI_Session is an int handle like the others (INTEGER in
# mpif.h and module mpi, TYPE(MPI_Session) in mpi_f08, MPI_SESSION_NULL, == and /=)
HANDLES.append('Session')
STRMAX = 'MPI_MAX_INFO_VAL'   # the largest fixed-size string out of the C API
# Bound by hand in bindings/fkeyval.c (Fortran callbacks take arguments by reference):
# the keyval constructors and the predefined callbacks, declared below in each style.
#   (name, handle type of the object, value kind: 'aint' or MPI-1 'int')
KEYVAL_FNS = [('Comm_create_keyval', 'Comm', 'aint'), ('Type_create_keyval', 'Datatype', 'aint'),
              ('Win_create_keyval', 'Win', 'aint'), ('Keyval_create', 'Comm', 'int')]
PREDEF_CB = ['MPI_COMM_NULL_COPY_FN', 'MPI_COMM_NULL_DELETE_FN', 'MPI_COMM_DUP_FN',
             'MPI_TYPE_NULL_COPY_FN', 'MPI_TYPE_NULL_DELETE_FN', 'MPI_TYPE_DUP_FN',
             'MPI_WIN_NULL_COPY_FN', 'MPI_WIN_NULL_DELETE_FN', 'MPI_WIN_DUP_FN',
             'MPI_NULL_COPY_FN', 'MPI_NULL_DELETE_FN', 'MPI_DUP_FN']
# MPI_SIZEOF (modules only): the intrinsic types and kinds it answers for
SIZEOF_TYPES = ['INTEGER(KIND=1)', 'INTEGER(KIND=2)', 'INTEGER(KIND=4)', 'INTEGER(KIND=8)',
                'REAL(KIND=4)', 'REAL(KIND=8)', 'COMPLEX(KIND=4)', 'COMPLEX(KIND=8)',
                'LOGICAL(KIND=1)', 'LOGICAL(KIND=2)', 'LOGICAL(KIND=4)', 'LOGICAL(KIND=8)',
                'CHARACTER(LEN=*)']


def keyval_interface(name, obj, val, style, procname):
    """Interface (or, style 'f08', the module procedure) of a keyval constructor."""
    ext = 'INTEGER(KIND=MPI_ADDRESS_KIND)' if val == 'aint' else 'INTEGER'
    lines = ['SUBROUTINE %s(copy_fn, delete_fn, keyval, extra_state, ierror)' % procname]
    if style == 'f77':
        lines += ['  IMPORT', '  IMPLICIT NONE', '  EXTERNAL :: copy_fn, delete_fn']
    else:
        cb = 'Copy' if name == 'Keyval_create' else obj.replace('Datatype', 'Type') + '_copy_attr'
        db = 'Delete' if name == 'Keyval_create' else obj.replace('Datatype', 'Type') + '_delete_attr'
        if style == 'f08c':
            lines += ['  IMPORT', '  IMPLICIT NONE']
        lines += ['  PROCEDURE(MPI_%s_function) :: copy_fn' % cb,
                  '  PROCEDURE(MPI_%s_function) :: delete_fn' % db]
    lines += ['  INTEGER :: keyval', '  %s :: extra_state' % ext]
    if style == 'f08':
        lines += ['  INTEGER, OPTIONAL, INTENT(OUT) :: ierror', '  INTEGER :: ierr_',
                  '  CALL loomf_%s(copy_fn, delete_fn, keyval, extra_state, ierr_)' % name.lower(),
                  '  IF (PRESENT(ierror)) ierror = ierr_']
    else:
        lines.append('  INTEGER :: ierror')
    return lines + ['END SUBROUTINE']


def f08_callback_interfaces():
    """Abstract interfaces of the attribute callbacks (mpi_f08)."""
    out = []
    for obj, ht in (('Comm', 'Comm'), ('Type', 'Datatype'), ('Win', 'Win'), ('', 'Comm')):
        c = obj + '_copy_attr' if obj else 'Copy'
        d = obj + '_delete_attr' if obj else 'Delete'
        out += ['    SUBROUTINE MPI_%s_function(oldobj, keyval, extra_state, attribute_val_in, &' % c,
                '        attribute_val_out, flag, ierror)',
                '      IMPORT', '      TYPE(MPI_%s) :: oldobj' % ht, '      INTEGER :: keyval, ierror',
                '      INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out',
                '      LOGICAL :: flag', '    END SUBROUTINE',
                '    SUBROUTINE MPI_%s_function(obj, keyval, attribute_val, extra_state, ierror)' % d,
                '      IMPORT', '      TYPE(MPI_%s) :: obj' % ht, '      INTEGER :: keyval, ierror',
                '      INTEGER(KIND=MPI_ADDRESS_KIND) :: attribute_val, extra_state',
                '    END SUBROUTINE']
    return out


def sizeof_procs(f08):
    """MPI_SIZEOF's specific procedures (module mpi and mpi_f08): scalars and arrays of
    any rank (assumed rank), the size in bytes of one element."""
    out = []
    for i, t in enumerate(SIZEOF_TYPES):
        out += ['  SUBROUTINE xf_sizeof_%d(x, size, ierror)' % i,
                '    %s, INTENT(IN) :: x(..)' % t,
                '    INTEGER, INTENT(OUT) :: size',
                '    INTEGER%s, INTENT(OUT) :: ierror' % (', OPTIONAL' if f08 else ''),
                # CHARACTER: one character (its kind is its size in bytes)
                '    size = KIND(x)' if t.startswith('CHARACTER') else
                '    size = INT(STORAGE_SIZE(x) / 8)']
        out += ['    IF (PRESENT(ierror)) ierror = 0' if f08 else '    ierror = 0',
                '  END SUBROUTINE']
    return out


def sizeof_generic():
    return (['  INTERFACE MPI_SIZEOF'] +
            wrap_free('MODULE PROCEDURE ' + ', '.join('xf_sizeof_%d' % i for i in
                                                      range(len(SIZEOF_TYPES))), '    ') +
            ['  END INTERFACE', '  PUBLIC :: MPI_SIZEOF'] +
            wrap_free('PRIVATE :: ' + ', '.join('xf_sizeof_%d' % i for i in
                                                range(len(SIZEOF_TYPES))), '  '))


def die(msg):
    sys.exit('gen_fortran: ' + msg)


def parse_args(argv):
    opts = {}
    i = 1
    while i < len(argv):
        if argv[i] in ('-i', '-a', '-o') and i + 1 < len(argv):
            opts[argv[i]] = argv[i + 1]
            i += 2
        else:
            die('usage: gen_fortran.py -i mpi.h -a fortran.api -o OUTDIR')
    if len(opts) != 3:
        die('usage: gen_fortran.py -i mpi.h -a fortran.api -o OUTDIR')
    return opts['-i'], opts['-a'], opts['-o']


# ---- reading mpi.h ------------------------------------------------------------------
def read_header(path):
    text = open(path).read()
    nocomment = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    decls = re.findall(r'XM_API_\((\w+),\s*(\w+),\s*\((.*?)\)\)\s*\n', nocomment, re.S)
    funcs = []
    for ret, name, args in decls:
        # MPI-4 large-count C bindings: no Fortran names of their own, mpi_f08 overloads
        large = name.endswith('_c')
        args = ' '.join(args.split())
        params = []
        if args != 'void':
            for a in args.split(','):
                a = a.strip()
                m = re.match(r'(.*?)(\w+)\s*((?:\[\w*\])*)$', a)
                if not m:
                    params = None
                    break
                ctype = ' '.join(m.group(1).replace('*', ' * ').split())
                dims = m.group(3)       # "[]" or "[][3]": kept as written
                if dims:
                    ctype = ctype + ' ' + dims
                params.append((ctype, m.group(2), a))
        (LARGECOUNT if large else funcs).append((ret, name, args, params))
    defines = {}
    # the first definition wins: later ones in mpi.h sit behind #ifndef guards
    for m in re.finditer(r'^#define\s+(MPI_\w+|XM_\w+)\s+(.*?)\s*$', nocomment, re.M):
        defines.setdefault(m.group(1), m.group(2))
    st = re.search(r'typedef struct MPI_Status \{(.*?)\} MPI_Status;', nocomment, re.S)
    if not st:
        die('no MPI_Status in ' + path)
    fields = re.findall(r'\b(int|MPI_Fint)\s+(\w+)\s*;', st.group(1))
    if len(fields) != st.group(1).count(';'):
        die('MPI_Status has a field that is not an int: the Fortran status needs ints')
    return funcs, defines, [f[1] for f in fields]


def eval_constants(defines):
    """Integer #defines of mpi.h -> {name: (value, handle type or None)}."""
    out = {}

    def ev(name, depth=0):
        if depth > 20 or name not in defines:
            raise ValueError(name)
        e = defines[name]
        htype = None
        m = re.match(r'^\(\((MPI_\w+)\)\s*(.*)\)$', e)
        if m:
            if m.group(1)[4:] not in HANDLES:
                raise ValueError(name)  # a pointer or callback sentinel
            htype, e = m.group(1), m.group(2)
        m = re.match(r'^XM_DT_\((\d+),\s*(\w+)\)$', e)
        if m:
            return 0x43000000 | (int(m.group(1), 0) << 8) | int(m.group(2), 0), 'MPI_Datatype'
        if re.match(r'^MPI_\w+$', e):
            return ev(e, depth + 1)
        if not re.match(r'^[-+()0-9a-fA-Fx ]+$', e):
            raise ValueError(name)
        v = eval(e)  # only digits, hex, signs and parentheses (checked above)
        if not isinstance(v, int):
            raise ValueError(name)
        return v, htype

    for name in defines:
        if not name.startswith('MPI_'):
            continue
        try:
            v, t = ev(name)
        except (ValueError, SyntaxError):
            continue
        if -2**31 <= v < 2**31:
            out[name] = (v, t)
    return out


# ---- fortran.api ---------------------------------------------------------------------
def read_api(path):
    rules, args, skips = [], {}, {}
    for ln, line in enumerate(open(path), 1):
        line = line.split('#', 1)[0].strip() if not line.lstrip().startswith('rule') \
            else line.strip()
        if not line or line.startswith('#'):
            continue
        w = line.split()
        if w[0] == 'skip' and len(w) >= 3:
            skips[w[1]] = ' '.join(w[2:])
        elif w[0] == 'arg' and len(w) == 4:
            args[(w[1], w[2])] = w[3]
        elif w[0] == 'rule' and len(w) >= 4:
            kind = w[-1]
            namere = w[-2]
            ctype = ' '.join(w[1:-2])
            rules.append((re.compile('^' + ctype + '$'), re.compile('^' + namere + '$'),
                          kind))
        else:
            die('%s:%d: cannot parse: %s' % (path, ln, line))
    return rules, args, skips


def classify(func, params, rules, args):
    kinds = []
    for ctype, name, _ in params:
        k = args.get((func, name))
        if k is None:
            for tre, nre, kind in rules:
                if tre.match(ctype) and nre.match(name):
                    k = kind
                    break
        if k == 'unsupported':
            return None, 'unsupported: argument "%s %s" (see fortran.api)' % (ctype, name)
        if k is None or k == 'none':
            return None, 'argument "%s %s" has no kind in fortran.api' % (ctype, name)
        kinds.append(k)
    return kinds, None


def htype_of(ctype):
    m = re.search(r'MPI_(' + '|'.join(HANDLES) + r')\b', ctype)
    return 'MPI_' + m.group(1)


# ---- the C layer ---------------------------------------------------------------------
def c_wrapper(ret, name, params, kinds):
    """One C function body shared by mpi_x_, pmpi_x_ and loomf_x_."""
    lname = name.lower()
    cparams, pre, callargs, post, strlens, decls = [], [], [], [], [], []
    for (ctype, cname, _), k in zip(params, kinds):
        v = 'a_' + cname
        if k == 'drop':
            callargs.append('0' if ctype == 'int' else 'NULL')   # (Info_create_env's argc)
            continue
        if k in ('int', 'logical'):
            cparams.append('MPI_Fint *' + v)
            callargs.append('*' + v)
        elif k in ('int_out', 'logical_out', 'logical_array'):
            cparams.append('MPI_Fint *' + v)
            callargs.append(v)
        elif k == 'int_array':
            cparams.append('MPI_Fint *' + v)
            callargs.append('xf_intarray(%s)' % v)
        elif k == 'int_range3':
            cparams.append('MPI_Fint *' + v)
            callargs.append('(int (*)[3])' + v)
        elif k in ('aint', 'offset', 'count'):
            t = {'aint': 'MPI_Aint', 'offset': 'MPI_Offset', 'count': 'MPI_Count'}[k]
            cparams.append('%s *%s' % (t, v))
            callargs.append('*' + v)
        elif k in ('aint_out', 'offset_out', 'count_out', 'aint_array', 'count_array'):
            t = {'aint_out': 'MPI_Aint', 'aint_array': 'MPI_Aint', 'offset_out': 'MPI_Offset',
                 'count_out': 'MPI_Count', 'count_array': 'MPI_Count'}[k]
            cparams.append('%s *%s' % (t, v))
            callargs.append(v)
        elif k == 'aint_int':
            cparams.append('MPI_Fint *' + v)
            callargs.append('(MPI_Aint)*' + v)
        elif k == 'aint_int_out':
            # an address-sized result in a default INTEGER: an error if it does not fit
            cparams.append('MPI_Fint *' + v)
            decls.append('MPI_Aint t_%s = 0;' % cname)
            callargs.append('&t_' + cname)
            post.append('if (rc == MPI_SUCCESS && (MPI_Fint)t_%s != t_%s) rc = MPI_ERR_ARG;'
                        % (cname, cname))
            post.append('if (rc == MPI_SUCCESS) *%s = (MPI_Fint)t_%s;' % (v, cname))
        elif k.startswith('aint_int_array:'):
            n = 'a_' + k.split(':', 1)[1]
            cparams.append('MPI_Fint *' + v)
            decls.append('MPI_Aint *t_%s = NULL;' % cname)
            pre.append('t_%s = xf_aints(%s, *%s);' % (cname, v, n))
            pre.append('if (!t_%s && *%s > 0) { rc = MPI_ERR_NO_MEM; goto out; }' % (cname, n))
            callargs.append('t_' + cname)
            post.append('free(t_%s);' % cname)
        elif k == 'index_out':
            # Fortran counts requests from 1 (MPI-3.1 3.7.5); MPI_UNDEFINED stays
            cparams.append('MPI_Fint *' + v)
            decls.append('int t_%s = MPI_UNDEFINED;' % cname)
            callargs.append('&t_' + cname)
            post.append('if (rc == MPI_SUCCESS || t_%s != MPI_UNDEFINED) *%s = t_%s >= 0 ? t_%s + 1 : t_%s;'
                        % (cname, v, cname, cname, cname))
        elif k.startswith('indices_out:'):
            n = 'a_' + k.split(':', 1)[1]
            cparams.append('MPI_Fint *' + v)
            callargs.append(v)
            post.append('if ((rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && *%s != MPI_UNDEFINED)' % n)
            post.append('    for (MPI_Fint i_ = 0; i_ < *%s; i_++) %s[i_]++;' % (n, v))
        elif k == 'file':
            cparams.append('MPI_Fint *' + v)
            callargs.append('MPI_File_f2c(*%s)' % v)
        elif k == 'file_out':
            cparams.append('MPI_Fint *' + v)
            decls.append('MPI_File t_%s = MPI_File_f2c(*%s);' % (cname, v))
            callargs.append('&t_' + cname)
            post.append('if (rc == MPI_SUCCESS) *%s = MPI_File_c2f(t_%s);' % (v, cname))
        elif k == 'handle':
            cparams.append('MPI_Fint *' + v)
            callargs.append('(%s)*%s' % (htype_of(ctype), v))
        elif k in ('handle_out', 'handle_array'):
            cparams.append('MPI_Fint *' + v)
            callargs.append('(%s *)%s' % (htype_of(ctype), v))
        elif k == 'status':
            cparams.append('MPI_Fint *' + v)
            callargs.append('xf_status(%s)' % v)
        elif k == 'status_in':
            cparams.append('MPI_Fint *' + v)
            callargs.append('(const MPI_Status *)%s' % v)
        elif k == 'statuses':
            cparams.append('MPI_Fint *' + v)
            callargs.append('xf_statuses(%s)' % v)
        elif k == 'choice':
            cparams.append('void *' + v)
            callargs.append('xf_buf(%s)' % v)
        elif k == 'string_in':
            cparams.append('char *' + v)
            strlens.append('size_t l_' + cname)
            decls.append('char *s_%s = NULL;' % cname)
            pre.append('s_%s = xf_cstr(%s, l_%s);' % (cname, v, cname))
            pre.append('if (!s_%s) { rc = MPI_ERR_NO_MEM; goto out; }' % cname)
            callargs.append('s_' + cname)
            post.append('free(s_%s);' % cname)
        elif k == 'info_str':
            # (issue 22, Fortran info) an info key or value: leading and trailing blanks
            # go (MPI-3.1 17.1.5 / MPI-4.0 10), blanks inside stay
            cparams.append('char *' + v)
            strlens.append('size_t l_' + cname)
            decls.append('char *s_%s = NULL;' % cname)
            pre.append('s_%s = xf_cstr_info(%s, l_%s);' % (cname, v, cname))
            pre.append('if (!s_%s) { rc = MPI_ERR_NO_MEM; goto out; }' % cname)
            callargs.append('s_' + cname)
            post.append('free(s_%s);' % cname)
        elif k.startswith('fbuflen:'):
            # (issue 22, Fortran info) MPI_INFO_GET_STRING's buflen counts characters
            # without C's nul, in and out; 0 (or less) leaves the value alone.  C gets
            # room for the Fortran variable at most.
            sv = k.split(':', 1)[1]
            cparams.append('MPI_Fint *' + v)
            decls.append('MPI_Fint i_%s = *%s;' % (cname, v))
            decls.append('int t_%s = i_%s <= 0 ? (int)i_%s : (int)((size_t)i_%s < l_%s ? '
                         '(size_t)i_%s : l_%s) + 1;' % ((cname,) * 4 + (sv, cname, sv)))
            callargs.append('&t_' + cname)
            # MPI_SESSION_GET_NTH_PSET has the same length rules and no flag
            hasflag = any(p[1] == 'flag' and kk == 'logical_out' for p, kk
                          in zip(params, kinds))
            post.append('if (rc == MPI_SUCCESS%s) *%s = (MPI_Fint)t_%s - 1;'
                        % (' && *a_flag' if hasflag else '', v, cname))
        elif k == 'string_out':
            cparams.append('char *' + v)
            strlens.append('size_t l_' + cname)
            decls.append('char *s_%s = NULL;' % cname)
            pre.append('s_%s = xf_tmpstr(l_%s);' % (cname, cname))
            pre.append('if (!s_%s) { rc = MPI_ERR_NO_MEM; goto out; }' % cname)
            callargs.append('s_' + cname)
            # a function that says with a flag whether it found the string (MPI_INFO_GET)
            # leaves the Fortran variable alone when it did not
            found = ' && *a_flag' if any(p[1] == 'flag' and kk == 'logical_out' for p, kk
                                         in zip(params, kinds)) else ''
            # (issue 22, Fortran info) nor when a Fortran buflen of 0 asked for no value
            found += ''.join(' && i_%s > 0' % p[1] for p, kk in zip(params, kinds)
                             if kk == 'fbuflen:' + cname)
            post.append('if (rc == MPI_SUCCESS%s) xf_fstr(%s, l_%s, s_%s);' % (found, v, cname, cname))
            post.append('free(s_%s);' % cname)
        elif k == 'user_fn':
            cparams.append('void (*%s)(void)' % v)
            callargs.append('(MPI_User_function *)' + v)
        elif k == 'errh_fn':
            cparams.append('void (*%s)(void)' % v)
            callargs.append('(%s)%s' % (ctype, v))
        elif k == 'ferrh_fn':
            # libmpi records the handler as Fortran (file handle by index)
            cparams.append('void (*%s)(void)' % v)
            callargs.append('(%s)%s' % (ctype, v))
            pre.append('mpipriv_file_errh_lang = 1;')
            post.append('mpipriv_file_errh_lang = 0;')
        elif k in ('attr_in', 'attr_in_int'):
            # (issue 22) libmpi stores the value with the language and width of this
            # call (mpipriv_attr_lang, core/xm.h), so that C readers get a pointer to it
            if k == 'attr_in':
                cparams.append('MPI_Aint *' + v)
                callargs.append('(void *)*' + v)
            else:
                cparams.append('MPI_Fint *' + v)
                callargs.append('(void *)(MPI_Aint)*' + v)
            pre.append('mpipriv_attr_lang = %d;' % (1 if k == 'attr_in' else 2))
            post.append('mpipriv_attr_lang = 0;')
        elif k in ('attr_out', 'attr_out_int'):
            # Fortran wants the value.  Read as Fortran (mpipriv_attr_lang), libmpi hands
            # back a Fortran-set value itself and a C-set attribute's pointer, which
            # becomes the integer (truncated for INTEGER); libmpi's predefined
            # attributes (keyvals 0x49......) point to an int.
            t = 'MPI_Aint' if k == 'attr_out' else 'MPI_Fint'
            cparams.append('%s *%s' % (t, v))
            decls.append('void *p_%s = NULL;' % cname)
            callargs.append('&p_' + cname)
            pre.append('mpipriv_attr_lang = %d;' % (1 if k == 'attr_out' else 2))
            post.append('mpipriv_attr_lang = 0;')
            post.append('if (rc == MPI_SUCCESS) *%s = (%s)xf_attrval(a_keyval, p_%s);'
                        % (v, t, cname))
        elif k == 'baseptr':
            cparams.append('void *' + v)
            callargs.append(v)
        else:
            die('%s: unknown kind %s' % (name, k))
    if ret == 'int':
        cparams.append('MPI_Fint *ierror')
    cparams += strlens
    body = []
    if ret == 'int':
        body.append('    int rc = MPI_SUCCESS;')
        body += ['    ' + p for p in decls + pre]
        body.append('    rc = pmpi ? PMPI_%s(%s) : MPI_%s(%s);'
                    % (name, ', '.join(callargs), name, ', '.join(callargs)))
        if pre:
            body.append('    goto out;')
            body.append('out:')
        body += ['    ' + p for p in post]
        body.append('    if (ierror) *ierror = rc;')
    else:
        body.append('    return pmpi ? PMPI_%s(%s) : MPI_%s(%s);'
                    % (name, ', '.join(callargs), name, ', '.join(callargs)))
    rtype = 'void' if ret == 'int' else ret
    sig = ', '.join(cparams) if cparams else 'void'
    args = ', '.join(re.sub(r'.*?(\w+)$', r'\1', p.replace('(*', '').replace(')(void)', ''))
                     for p in cparams)
    out = ['static %s xf_%s(int pmpi%s)' % (rtype, lname, (', ' + sig) if cparams else ''),
           '{'] + body + ['}']
    # loomfp_: mpi_f08's PMPI_X (the Fortran 2008 profiling interface) calls PMPI_X
    for prefix, pm in (('mpi_', 0), ('pmpi_', 1), ('loomf_', 0), ('loomfp_', 1)):
        ret_kw = '' if rtype == 'void' else 'return '
        out.append('XF_EXPORT %s %s%s_(%s)' % (rtype, prefix, lname, sig))
        out.append('{')
        out.append('    %sxf_%s(%d%s);' % (ret_kw, lname, pm, (', ' + args) if args else ''))
        out.append('}')
    return '\n'.join(out) + '\n'


C_PROLOGUE = r'''/*
 * mpi_fortran.c - GENERATED by mpi/bindings/gen_fortran.py from include/mpi.h and
 * bindings/fortran.api: the C half of libmpifort (Fortran calling conventions -> C).
 * Do not edit; see mpi/README.md "Fortran and C++" for how to add a function.
 */
#include <stdlib.h>
#include <string.h>
#include "mpi.h"

#define XF_EXPORT __attribute__((visibility("default")))

/* The Fortran sentinels: common blocks of mpif.h, module mpi and module mpi_f08 (one
 * address each, whichever binding style names them), defined in libmpi (api/fint.c). */
extern MPI_Fint mpipriv_bottom_[], mpipriv_in_place_[], mpipriv_status_ignore_[],
    mpipriv_statuses_ignore_[], mpipriv_errcodes_ignore_[], mpipriv_unweighted_[],
    mpipriv_weights_empty_[];

static void *xf_buf(void *b)
{
    if (b == (void *)mpipriv_bottom_)
        return MPI_BOTTOM;
    if (b == (void *)mpipriv_in_place_)
        return MPI_IN_PLACE;
    return b;
}

static int *xf_intarray(MPI_Fint *a)
{
    if (a == mpipriv_errcodes_ignore_)
        return MPI_ERRCODES_IGNORE;
    if (a == mpipriv_unweighted_)
        return MPI_UNWEIGHTED;
    if (a == mpipriv_weights_empty_)
        return MPI_WEIGHTS_EMPTY;
    return a;
}

static MPI_Status *xf_status(MPI_Fint *s)
{
    return s == mpipriv_status_ignore_ || s == mpipriv_statuses_ignore_
               ? MPI_STATUS_IGNORE : (MPI_Status *)s;
}

static MPI_Status *xf_statuses(MPI_Fint *s)
{
    return s == mpipriv_statuses_ignore_ || s == mpipriv_status_ignore_
               ? MPI_STATUSES_IGNORE : (MPI_Status *)s;
}

/* CHARACTER(LEN=len) in: a C copy without Fortran's trailing blanks */
static char *xf_cstr(const char *f, size_t len)
{
    while (len > 0 && f[len - 1] == ' ')
        len--;
    char *s = malloc(len + 1);
    if (s) {
        memcpy(s, f, len);
        s[len] = '\0';
    }
    return s;
}

/* CHARACTER(LEN=len) out: C writes into a zeroed buffer at least as long as both the
 * largest fixed-size MPI string and the Fortran variable (MPI_Info_get writes up to the
 * caller's valuelen, which the standard bounds by the variable's length) */
static char *xf_tmpstr(size_t len)
{
    return calloc((len > %(strmax)s ? len : %(strmax)s) + 1, 1);
}

static void xf_fstr(char *f, size_t len, const char *s)
{
    size_t n = strlen(s);
    if (n > len)
        n = len;
    memcpy(f, s, n);
    memset(f + n, ' ', len - n);
}

/* a default-INTEGER array of addresses (MPI-1 Fortran) as MPI_Aint; NULL if n <= 0 */
static MPI_Aint *xf_aints(const MPI_Fint *a, MPI_Fint n)
{
    MPI_Aint *t = n > 0 ? malloc((size_t)n * sizeof *t) : NULL;
    for (MPI_Fint i = 0; t && i < n; i++)
        t[i] = a[i];
    return t;
}

/* the language of the attribute call in progress: set around each attribute call,
 * read and cleared by libmpi's attribute store (its core/xm.h, issue 22) */
extern __thread int mpipriv_attr_lang;

/* attribute value for Fortran: a predefined keyval (MPI_TAG_UB's kind, not a dynamic
 * one: the 0x00800000 bit marks keyvals made by MPI_*_create_keyval) points to an int,
 * MPI_WIN_SIZE to an MPI_Aint, MPI_WIN_BASE is the address itself; a user attribute
 * read from Fortran is handed back as the value (Fortran-set) or the C pointer */
static MPI_Aint xf_attrval(MPI_Fint *keyval, void *p)
{
    if (((unsigned)*keyval & 0xff800000u) != ((unsigned)MPI_TAG_UB & 0xff800000u))
        return (MPI_Aint)p;
    if (*keyval == MPI_WIN_BASE)
        return (MPI_Aint)p;
    if (*keyval == MPI_WIN_SIZE)
        return p ? *(MPI_Aint *)p : 0;
    return p ? *(int *)p : 0;
}

/* MPI_PCONTROL(LEVEL): the C function is variadic, Fortran passes the level only */
XF_EXPORT void mpi_pcontrol_(MPI_Fint *level, MPI_Fint *ierror)
{
    int rc = MPI_Pcontrol(*level);
    if (ierror) *ierror = rc;
}
XF_EXPORT void pmpi_pcontrol_(MPI_Fint *level, MPI_Fint *ierror)
{
    int rc = PMPI_Pcontrol(*level);
    if (ierror) *ierror = rc;
}
XF_EXPORT void loomf_pcontrol_(MPI_Fint *level, MPI_Fint *ierror)
{
    mpi_pcontrol_(level, ierror);
}
'''


# ---- (issue 22, Fortran info and generalized requests) -------------------------------
C_FINFO = r'''
/* an info key or value from Fortran: without leading and trailing blanks */
static char *xf_cstr_info(const char *f, size_t len)
{
    while (len > 0 && f[0] == ' ')
        f++, len--;
    return xf_cstr(f, len);
}
'''


def greq_interface(style, procname):
    """MPI_GREQUEST_START, bound by hand in bindings/fgreq.c (its Fortran callbacks take
    their arguments by reference): the interface in module mpi (style 'f77'), in
    mpi_f08's interface to the C layer ('f08c') or mpi_f08's procedure ('f08')."""
    lines = ['SUBROUTINE %s(query_fn, free_fn, cancel_fn, extra_state, request, ierror)'
             % procname]
    if style == 'f77':
        lines += ['  IMPORT', '  IMPLICIT NONE', '  EXTERNAL :: query_fn, free_fn, cancel_fn']
    else:
        if style == 'f08c':
            lines += ['  IMPORT', '  IMPLICIT NONE']
        lines += ['  PROCEDURE(MPI_Grequest_query_function) :: query_fn',
                  '  PROCEDURE(MPI_Grequest_free_function) :: free_fn',
                  '  PROCEDURE(MPI_Grequest_cancel_function) :: cancel_fn']
    lines.append('  INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state')
    if style == 'f08':
        lines += ['  TYPE(MPI_Request) :: request',
                  '  INTEGER, OPTIONAL, INTENT(OUT) :: ierror', '  INTEGER :: ierr_',
                  '  CALL loomf_grequest_start(query_fn, free_fn, cancel_fn, extra_state, '
                  'request, ierr_)',
                  '  IF (PRESENT(ierror)) ierror = ierr_']
    else:
        lines += ['  %s :: request' % ('TYPE(MPI_Request)' if style == 'f08c' else 'INTEGER'),
                  '  INTEGER :: ierror']
    return lines + ['END SUBROUTINE']


def f08_greq_callbacks():
    """mpi_f08's abstract interfaces of the generalized request callbacks."""
    return ['    SUBROUTINE MPI_Grequest_query_function(extra_state, status, ierror)',
            '      IMPORT', '      INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state',
            '      TYPE(MPI_Status) :: status', '      INTEGER :: ierror',
            '    END SUBROUTINE',
            '    SUBROUTINE MPI_Grequest_free_function(extra_state, ierror)',
            '      IMPORT', '      INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state',
            '      INTEGER :: ierror', '    END SUBROUTINE',
            '    SUBROUTINE MPI_Grequest_cancel_function(extra_state, complete, ierror)',
            '      IMPORT', '      INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state',
            '      LOGICAL :: complete', '      INTEGER :: ierror', '    END SUBROUTINE']
# ---- end of Fortran info and generalized requests --------------------------------------


# ---- spawn, user data representations, file error handlers -----------------------
# MPI_COMM_SPAWN(_MULTIPLE) and MPI_REGISTER_DATAREP are bound by hand in
# bindings/fspawn.c and bindings/fdatarep.c (CHARACTER arrays; Fortran conversion
# procedures); here are their interfaces in module mpi ('f77'), in mpi_f08's interface
# to the C layer ('f08c') and mpi_f08's module procedures ('f08').
HAND_FNS = ['Comm_spawn', 'Comm_spawn_multiple', 'Register_datarep']
# constants that are INTEGER(KIND=MPI_OFFSET_KIND) in Fortran (MPI-3.1 A.1.1): a
# default INTEGER MPI_DISPLACEMENT_CURRENT handed to MPI_FILE_SET_VIEW's 8-byte DISP
# through mpif.h (no interface) read 4 bytes of garbage
OFFSET_CONSTS = ['MPI_DISPLACEMENT_CURRENT']
C_F22 = r'''
/* set around MPI_File_create_errhandler: the handler is a Fortran procedure */
extern __thread int mpipriv_file_errh_lang;
'''


def hand_interface(name, style, procname, cprefix='loomf'):
    h = style in ('f08', 'f08c')
    comm = 'TYPE(MPI_Comm)' if h else 'INTEGER'
    info = 'TYPE(MPI_Info)' if h else 'INTEGER'
    if name == 'Comm_spawn':
        args = ['command', 'argv', 'maxprocs', 'info', 'root', 'comm', 'intercomm',
                'array_of_errcodes']
        decl = ['CHARACTER(LEN=*) :: command, argv(*)', 'INTEGER :: maxprocs, root',
                '%s :: info' % info, '%s :: comm, intercomm' % comm,
                'INTEGER :: array_of_errcodes(*)']
    elif name == 'Comm_spawn_multiple':
        args = ['count', 'array_of_commands', 'array_of_argv', 'array_of_maxprocs',
                'array_of_info', 'root', 'comm', 'intercomm', 'array_of_errcodes']
        decl = ['INTEGER :: count, root', 'CHARACTER(LEN=*) :: array_of_commands(*)',
                'CHARACTER(LEN=*) :: array_of_argv(count, *)',
                'INTEGER :: array_of_maxprocs(*), array_of_errcodes(*)',
                '%s :: array_of_info(*)' % info, '%s :: comm, intercomm' % comm]
    else:
        args = ['datarep', 'read_conversion_fn', 'write_conversion_fn',
                'dtype_file_extent_fn', 'extra_state']
        decl = ['CHARACTER(LEN=*) :: datarep']
        if h:
            decl += ['PROCEDURE(MPI_Datarep_conversion_function) :: read_conversion_fn',
                     'PROCEDURE(MPI_Datarep_conversion_function) :: write_conversion_fn',
                     'PROCEDURE(MPI_Datarep_extent_function) :: dtype_file_extent_fn']
        else:
            decl += ['EXTERNAL :: read_conversion_fn, write_conversion_fn, dtype_file_extent_fn']
        decl += ['INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state']
    lines = ['SUBROUTINE %s(%s, &' % (procname, ', '.join(args[:4])),
             '    %s, ierror)' % ', '.join(args[4:])]
    if style != 'f08':
        lines += ['  IMPORT', '  IMPLICIT NONE']
    lines += ['  ' + d for d in decl]
    if style == 'f08':
        lines += ['  INTEGER, OPTIONAL, INTENT(OUT) :: ierror', '  INTEGER :: ierr_',
                  '  CALL %s_%s(%s, &' % (cprefix, name.lower(), ', '.join(args[:4])),
                  '      %s, ierr_)' % ', '.join(args[4:]),
                  '  IF (PRESENT(ierror)) ierror = ierr_']
    else:
        lines.append('  INTEGER :: ierror')
    return lines + ['END SUBROUTINE']


def f08_f22_callbacks():
    return ['    SUBROUTINE MPI_File_errhandler_function(file, error_code)',
            '      IMPORT', '      TYPE(MPI_File) :: file', '      INTEGER :: error_code',
            '    END SUBROUTINE',
            '    SUBROUTINE MPI_Datarep_conversion_function(userbuf, datatype, count, &',
            '        filebuf, position, extra_state, ierror)',
            '      IMPORT', '      TYPE(C_PTR), VALUE :: userbuf, filebuf',
            '      TYPE(MPI_Datatype) :: datatype', '      INTEGER :: count, ierror',
            '      INTEGER(KIND=MPI_OFFSET_KIND) :: position',
            '      INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state', '    END SUBROUTINE',
            '    SUBROUTINE MPI_Datarep_extent_function(datatype, extent, extra_state, ierror)',
            '      IMPORT', '      TYPE(MPI_Datatype) :: datatype',
            '      INTEGER(KIND=MPI_ADDRESS_KIND) :: extent, extra_state',
            '      INTEGER :: ierror', '    END SUBROUTINE']
# ---- end of spawn, user data representations, file error handlers ----------------------


# ---- Fortran declarations --------------------------------------------------------------
def fdecl(kind, ctype, fname, style):
    """Declaration of one dummy argument. style: 'f77' (module mpi interfaces),
    'f08' (user-facing mpi_f08), 'f08c' (mpi_f08's interface to loomf_x_)."""
    h = style in ('f08', 'f08c')
    if kind in ('int', 'int_out', 'index_out'):
        return ['INTEGER :: ' + fname]
    if kind.startswith('indices_out:'):
        return ['INTEGER :: %s(*)' % fname]
    if kind == 'int_array':
        return ['INTEGER :: %s(*)' % fname]
    if kind == 'int_range3':
        return ['INTEGER :: %s(3,*)' % fname]
    if kind in ('logical', 'logical_out'):
        return ['LOGICAL :: ' + fname]
    if kind == 'logical_array':
        return ['LOGICAL :: %s(*)' % fname]
    if kind in ('aint', 'aint_out', 'attr_in', 'attr_out'):
        return ['INTEGER(KIND=MPI_ADDRESS_KIND) :: ' + fname]
    if kind == 'aint_array':
        return ['INTEGER(KIND=MPI_ADDRESS_KIND) :: %s(*)' % fname]
    if kind in ('offset', 'offset_out'):
        return ['INTEGER(KIND=MPI_OFFSET_KIND) :: ' + fname]
    if kind in ('count', 'count_out'):
        return ['INTEGER(KIND=MPI_COUNT_KIND) :: ' + fname]
    if kind == 'count_array':
        return ['INTEGER(KIND=MPI_COUNT_KIND) :: %s(*)' % fname]
    if kind in ('aint_int', 'aint_int_out'):
        return ['INTEGER :: ' + fname]
    if kind.startswith('aint_int_array:'):
        return ['INTEGER :: %s(*)' % fname]
    if kind == 'attr_in_int' or kind == 'attr_out_int':
        return ['INTEGER :: ' + fname]
    if kind in ('file', 'file_out'):
        return ['TYPE(MPI_File) :: ' + fname if h else 'INTEGER :: ' + fname]
    if kind in ('handle', 'handle_out'):
        return ['TYPE(%s) :: %s' % (htype_of(ctype), fname) if h else 'INTEGER :: ' + fname]
    if kind == 'handle_array':
        return ['TYPE(%s) :: %s(*)' % (htype_of(ctype), fname) if h
                else 'INTEGER :: %s(*)' % fname]
    if kind in ('status', 'status_in'):
        return ['TYPE(MPI_Status) :: ' + fname if h
                else 'INTEGER :: %s(MPI_STATUS_SIZE)' % fname]
    if kind == 'statuses':
        return ['TYPE(MPI_Status) :: %s(*)' % fname if h
                else 'INTEGER :: %s(MPI_STATUS_SIZE,*)' % fname]
    if kind == 'choice':
        if style == 'f08':
            return ['TYPE(*), DIMENSION(..), TARGET :: ' + fname]
        if style == 'f08c':
            return ['TYPE(C_PTR), VALUE :: ' + fname]
        return ['!GCC$ ATTRIBUTES NO_ARG_CHECK :: ' + fname,
                'TYPE(*), DIMENSION(*) :: ' + fname]
    if kind.startswith('fbuflen:'):   # (issue 22, Fortran info)
        return ['INTEGER :: ' + fname]
    if kind in ('string_in', 'string_out', 'info_str'):
        return ['CHARACTER(LEN=*) :: ' + fname]
    if kind == 'user_fn':
        return ['PROCEDURE(MPI_User_function) :: ' + fname if h else 'EXTERNAL :: ' + fname]
    if kind == 'errh_fn':
        return ['PROCEDURE(%s) :: %s' % (ctype.split()[0], fname) if h
                else 'EXTERNAL :: ' + fname]
    if kind == 'ferrh_fn':
        return ['PROCEDURE(MPI_File_errhandler_function) :: ' + fname if h
                else 'EXTERNAL :: ' + fname]
    if kind == 'baseptr':
        return ['TYPE(C_PTR) :: ' + fname if h
                else 'INTEGER(KIND=MPI_ADDRESS_KIND) :: ' + fname]
    die('unknown kind ' + kind)


FRET = {'double': 'DOUBLE PRECISION', 'MPI_Aint': 'INTEGER(KIND=MPI_ADDRESS_KIND)'}


def f_interface(ret, name, params, kinds, style, procname):
    """An interface body (style f77 or f08c) for external procedure procname."""
    names = [p[1] for p, k in zip(params, kinds) if k != 'drop']
    fkinds = [(p, k) for p, k in zip(params, kinds) if k != 'drop']
    if ret == 'int':
        names.append('ierror')
        lines = ['SUBROUTINE %s(%s)' % (procname, ', '.join(names))]
    else:
        lines = ['FUNCTION %s(%s)' % (procname, ', '.join(names))]
    lines.append('  IMPORT')
    lines.append('  IMPLICIT NONE')
    for (ctype, cname, _), k in fkinds:
        lines += ['  ' + d for d in fdecl(k, ctype, cname, style)]
    if ret == 'int':
        lines.append('  INTEGER :: ierror')
        lines.append('END SUBROUTINE')
    else:
        lines.append('  %s :: %s' % (FRET[ret], procname))
        lines.append('END FUNCTION')
    return lines


def f08_procedure(ret, name, params, kinds, prefix='MPI', cprefix='loomf'):
    sect = f08_section_procedure(ret, name, params, kinds, prefix, cprefix)
    if sect is not None:
        return sect
    fkinds = [(p, k) for p, k in zip(params, kinds) if k != 'drop']
    names = [p[1] for p, k in fkinds]
    callargs = ['C_LOC(%s)' % p[1] if k == 'choice' else p[1] for p, k in fkinds]
    pname = '%s_%s_f08' % (prefix, name)
    if ret == 'int':
        lines = ['SUBROUTINE %s(%s)' % (pname, ', '.join(names + ['ierror']))]
    else:
        lines = ['FUNCTION %s(%s) RESULT(res)' % (pname, ', '.join(names))]
    for (ctype, cname, _), k in fkinds:
        lines += ['  ' + d for d in fdecl(k, ctype, cname, 'f08')]
    if ret == 'int':
        lines.append('  INTEGER, OPTIONAL, INTENT(OUT) :: ierror')
        lines.append('  INTEGER :: ierr_')
        lines.append('  CALL %s_%s(%s)' % (cprefix, name.lower(), ', '.join(callargs + ['ierr_'])))
        lines.append('  IF (PRESENT(ierror)) ierror = ierr_')
        lines.append('END SUBROUTINE')
    else:
        lines.append('  %s :: res' % FRET[ret])
        lines.append('  res = %s_%s(%s)' % (cprefix, name.lower(), ', '.join(callargs)))
        lines.append('END FUNCTION')
    return lines


# ---- mpi_f08 noncontiguous sections (MPI_SUBARRAYS_SUPPORTED; issue 22, fort08) --------
# A module procedure with choice buffers tests IS_CONTIGUOUS: contiguous buffers take the
# old path unchanged (C_LOC of the buffer); a noncontiguous section goes to
# bindings/fsection.c, which returns the first element's address and a derived datatype
# describing the section in place (count becomes 1).  Which count and datatype describe
# which buffer (the first pair present wins):
SECTION_PAIRS = {'sendbuf': [('sendcount', 'sendtype')],
                 'recvbuf': [('recvcount', 'recvtype')],
                 'inbuf': [('incount', 'dt'), ('incount', 'datatype')],
                 'outbuf': [('outcount', 'dt'), ('outcount', 'datatype')],
                 'origin_addr': [('origin_count', 'origin_datatype')],
                 'result_addr': [('result_count', 'result_datatype')]}
# buffers whose count is one block of several (rank-indexed blocks): no single type can
# describe block i of a section, so a noncontiguous one is MPI_ERR_BUFFER
SECTION_MULTIBLOCK = re.compile(r'^(I?(Gather|Allgather|Neighbor_allgather)(_init)?:recvbuf|'
                                r'I?Scatter(_init)?:sendbuf|'
                                r'I?(Alltoall|Neighbor_alltoall)(_init)?:(send|recv)buf)$')
# the address of the first element is the right answer (no data is accessed)
SECTION_ADDR = {('Get_address', 'location')}
# nonblocking calls whose pending request keeps its own reference on the datatype
# (core/p2p.c; coll/sched.c for nonblocking collectives, api/pcoll.c for persistent
# ones but for the w forms' type arrays), so the temporary type is freed as soon as the
# call returns; the others (split/nonblocking I/O, request-based RMA) keep it (see
# mpi/README.md)
SECTION_P2P = {'Isend', 'Issend', 'Irsend', 'Ibsend', 'Irecv', 'Imrecv', 'Send_init',
               'Ssend_init', 'Rsend_init', 'Bsend_init', 'Recv_init'}
SECTION_NBC = re.compile(r'^(I(bcast|gather|gatherv|scatter|scatterv|allgather|allgatherv|'
                         r'alltoall|alltoallv|alltoallw|reduce|allreduce|reduce_scatter|'
                         r'reduce_scatter_block|scan|exscan|neighbor_\w+)|'
                         r'(Bcast|Gather|Gatherv|Scatter|Scatterv|Allgather|Allgatherv|'
                         r'Alltoall|Alltoallv|Reduce|Allreduce|Reduce_scatter|'
                         r'Reduce_scatter_block|Scan|Exscan|Neighbor_allgather|'
                         r'Neighbor_allgatherv|Neighbor_alltoall|Neighbor_alltoallv)_init)$')
SECTION_ASYNC = re.compile(r'^(I[a-z]\w*|\w+_init|File_i\w+|File_\w+_(begin|end)|R?put|'
                           r'R?get|R?accumulate|R?get_accumulate|Fetch_and_op|'
                           r'Compare_and_swap)$', re.I)


def section_modes(name, fkinds):
    """{choice arg: ('map', count, datatype) | ('addr',) | ('bad',)}"""
    kinds = {p[1]: (p[0], k) for p, k in fkinds}
    modes, used = {}, {}
    for (ctype, cname, _), k in fkinds:
        if k != 'choice':
            continue
        if (name, cname) in SECTION_ADDR:
            modes[cname] = ('addr',)
            continue
        modes[cname] = ('bad',)
        if SECTION_MULTIBLOCK.match('%s:%s' % (name, cname)):
            continue
        for cnt, dt in SECTION_PAIRS.get(cname, []) + [('count', 'dt'),
                                                         ('count', 'datatype')]:
            if (kinds.get(cnt, ('', ''))[1] in ('int', 'count') and
                    kinds.get(dt, ('', ''))[1] == 'handle' and 'Datatype' in kinds[dt][0]):
                modes[cname] = ('map', cnt, dt)
                used.setdefault(dt, []).append(cname)
                used.setdefault(cnt, []).append(cname)
                break
    # a count or datatype shared by two buffers (reductions): one type cannot describe
    # two layouts
    for arg, bufs in used.items():
        if len(bufs) > 1:
            for b in bufs:
                modes[b] = ('bad',)
    return modes


def f08_section_interfaces():
    """mpi_f08's interfaces to bindings/fsection.c (descriptor-taking BIND(C) helpers)."""
    return ['    SUBROUTINE loomf_section(buf, count, datatype, addr, newcount, newtype) &',
            '        BIND(C, NAME="loomf_section_")',
            '      IMPORT', '      TYPE(*), DIMENSION(..) :: buf',
            '      INTEGER(KIND=C_LONG_LONG), VALUE :: count',
            '      TYPE(MPI_Datatype) :: datatype, newtype', '      TYPE(C_PTR) :: addr',
            '      INTEGER(KIND=C_LONG_LONG) :: newcount', '    END SUBROUTINE',
            '    SUBROUTINE loomf_section_free(newtype, datatype) &',
            '        BIND(C, NAME="loomf_section_free_")',
            '      IMPORT', '      TYPE(MPI_Datatype) :: newtype, datatype', '    END SUBROUTINE',
            '    SUBROUTINE loomf_section_addr(buf, addr) BIND(C, NAME="loomf_section_addr_")',
            '      IMPORT', '      TYPE(*), DIMENSION(..) :: buf', '      TYPE(C_PTR) :: addr',
            '    END SUBROUTINE',
            '    SUBROUTINE loomf_section_bad(ierror) BIND(C, NAME="loomf_section_bad_")',
            '      IMPORT', '      INTEGER :: ierror', '    END SUBROUTINE']


def f08_section_procedure(ret, name, params, kinds, prefix, cprefix):
    """The module procedure of a function with choice buffers; None if it has none."""
    fkinds = [(p, k) for p, k in zip(params, kinds) if k != 'drop']
    choices = [p[1] for p, k in fkinds if k == 'choice']
    if not choices or ret != 'int':
        return None
    base = name[:-2] if name.endswith('_c') else name   # large-count overloads
    modes = section_modes(base, fkinds)
    asyn = bool(SECTION_ASYNC.match(base))
    keep = asyn and base not in SECTION_P2P and not SECTION_NBC.match(base) and any(
        k == 'handle_out' and 'Request' in p[0] for p, k in fkinds)
    keep = keep or base.endswith('_begin')
    names = [p[1] for p, k in fkinds]
    pname = '%s_%s_f08' % (prefix, name)
    cname_ = '%s_%s' % (cprefix, name.lower())
    lines = ['SUBROUTINE %s(%s)' % (pname, ', '.join(names + ['ierror']))]
    for (ctype, cname, _), k in fkinds:
        for d in fdecl(k, ctype, cname, 'f08'):
            if k == 'choice' and asyn:
                d = d.replace(', TARGET ::', ', TARGET, ASYNCHRONOUS ::')
            lines.append('  ' + d)
    lines += ['  INTEGER, OPTIONAL, INTENT(OUT) :: ierror', '  INTEGER :: ierr_']
    fast = ['C_LOC(%s)' % n if n in choices else n for n in names]
    cond = ' .AND. '.join('IS_CONTIGUOUS(%s)' % c for c in choices)
    slow_args = dict((n, n) for n in names)
    pre, post = [], []
    for c in choices:
        m = modes[c]
        lines.append('  TYPE(C_PTR) :: p_%s' % c)
        slow_args[c] = 'p_' + c
        if m[0] == 'map':
            cnt, dt = m[1], m[2]
            ck = dict((p[1], k) for p, k in fkinds)[cnt]
            lines += ['  INTEGER(KIND=MPI_COUNT_KIND) :: n_%s' % c,
                      '  TYPE(MPI_Datatype) :: t_%s' % c,
                      '  %s :: c_%s' % ('INTEGER(KIND=MPI_COUNT_KIND)' if ck == 'count'
                                        else 'INTEGER', c)]
            slow_args[cnt] = 'c_' + c
            slow_args[dt] = 't_' + c
            conv = ['CALL loomf_section(%s, INT(%s, C_LONG_LONG), %s, p_%s, n_%s, t_%s)'
                    % (c, cnt, dt, c, c, c), 'c_%s = INT(n_%s, KIND(c_%s))' % (c, c, c)]
            if len(choices) == 1:   # known to be noncontiguous here
                pre += ['  ' + x for x in conv]
                if not keep:
                    post.append('  CALL loomf_section_free(t_%s, %s)' % (c, dt))
                continue
            pre += ['  IF (IS_CONTIGUOUS(%s)) THEN' % c,
                    '    p_%s = C_LOC(%s)' % (c, c),
                    '    c_%s = %s' % (c, cnt), '    t_%s = %s' % (c, dt),
                    '  ELSE'] + ['    ' + x for x in conv] + ['  END IF']
            if not keep:
                post.append('  IF (.NOT. IS_CONTIGUOUS(%s)) CALL loomf_section_free(t_%s, %s)'
                            % (c, c, dt))
        elif m[0] == 'addr':
            pre.append('  CALL loomf_section_addr(%s, p_%s)' % (c, c))
        else:
            pre += ['  IF (.NOT. IS_CONTIGUOUS(%s)) THEN' % c,
                    '    CALL loomf_section_bad(ierr_)',
                    '    IF (PRESENT(ierror)) ierror = ierr_', '    RETURN', '  END IF',
                    '  p_%s = C_LOC(%s)' % (c, c)]
    lines += ['  IF (%s) THEN' % cond,
              '    CALL %s(%s)' % (cname_, ', '.join(fast + ['ierr_'])),
              '  ELSE']
    lines += ['  ' + x for x in pre]
    lines.append('    CALL %s(%s)' % (cname_, ', '.join([slow_args[n] for n in names] +
                                                      ['ierr_'])))
    lines += ['  ' + x for x in post]
    lines += ['  END IF', '  IF (PRESENT(ierror)) ierror = ierr_', 'END SUBROUTINE']
    return lines


# ---- mpi_f08 profiling names (PMPI_X; issue 22, fort08) --------------------------------
# PMPI_X has MPI_X's generic interface; its module procedure PMPI_X_f08 calls loomfp_x_
# (the C layer's entry calling PMPI_X), so a tool that defines its own MPI_X reaches the
# library through PMPI_X.  MPI_PCONTROL has no PMPI_ form in Fortran 2008 here.
def f08_pmpi_interfaces(bound):
    g = []
    for ret, name, params, kinds in bound:
        for ln in f_interface(ret, name, params, kinds, 'f08c', 'loomfp_' + name.lower()):
            g += wrap_free(ln, '    ')
    return g


def f08_pmpi_generics(bound):
    g = []
    for ret, name, params, kinds in bound:
        g += ['  INTERFACE PMPI_%s' % name, '    MODULE PROCEDURE PMPI_%s_f08' % name,
              '  END INTERFACE', '  PUBLIC :: PMPI_%s, PMPI_%s_f08' % (name, name)]
    return g


def f08_pmpi_procedures(bound):
    g = []
    for ret, name, params, kinds in bound:
        for ln in f08_procedure(ret, name, params, kinds, 'PMPI', 'loomfp'):
            g += wrap_free(ln, '  ')
    return g


# ---- mpi_f08 large-count overloads (MPI-4.0 19.2; issue 22, fort08) ------------------
# The C functions MPI_X_c (api/largecount*.c) become module procedures MPI_X_f08c (and
# PMPI_X_f08c) in the generic MPI_X (PMPI_X) of mpi_f08: counts and displacements are
# INTEGER(KIND=MPI_COUNT_KIND).  The C layer gets mpi_x_c_ / loomf_x_c_ ... like any
# function; mpif.h and module mpi are unchanged.  An overload whose Fortran arguments
# would look like the base function's (MPI_COUNT_KIND = MPI_ADDRESS_KIND here) is left
# out: the generic could not tell them apart.
LARGECOUNT = []   # (ret, name, args, params) of the _c prototypes, filled by read_header
LARGECOUNT_RULES = [(re.compile(r'^(const )?MPI_Count \[\]$'), re.compile(r'^\w+$'),
                     'count_array')]


def largecount_bound(bound, rules, argkinds):
    base = dict((name, (params, kinds)) for ret, name, params, kinds in bound)
    out, seen = [], set()

    def sig(params, kinds):
        return [' '.join(fdecl(k, p[0], 'x', 'f08')).replace('MPI_ADDRESS_KIND', 'K8')
                .replace('MPI_COUNT_KIND', 'K8').replace('MPI_OFFSET_KIND', 'K8')
                for p, k in zip(params, kinds) if k != 'drop']
    for ret, name, cargs, params in LARGECOUNT:
        b = name[:-2]
        if name in seen or b not in base or params is None or ret != 'int':
            continue
        seen.add(name)
        kinds, why = classify(name, params, LARGECOUNT_RULES + rules, argkinds)
        if kinds is None or sig(params, kinds) == sig(*base[b]):
            continue
        out.append((ret, name, params, kinds))
    return out


def largecount_generics(large):
    g = []
    for ret, name, params, kinds in large:
        b = name[:-2]
        g += ['  INTERFACE MPI_%s' % b, '    MODULE PROCEDURE MPI_%s_f08c' % b, '  END INTERFACE',
              '  INTERFACE PMPI_%s' % b, '    MODULE PROCEDURE PMPI_%s_f08c' % b,
              '  END INTERFACE', '  PUBLIC :: MPI_%s_f08c, PMPI_%s_f08c' % (b, b)]
    return g


def largecount_procedures(large):
    g = []
    for ret, name, params, kinds in large:
        b = name[:-2]
        for prefix, cprefix in (('MPI', 'loomf'), ('PMPI', 'loomfp')):
            lines = f08_procedure(ret, name, params, kinds, prefix, cprefix)
            lines[0] = lines[0].replace('%s_%s_f08(' % (prefix, name),
                                        '%s_%s_f08c(' % (prefix, b))
            for ln in lines:
                g += wrap_free(ln, '  ')
    return g


def wrap_free(line, indent=''):
    """Free-form lines of at most 132 characters (continuations with &)."""
    out = []
    line = indent + line
    while len(line) > 100:
        cut = line.rfind(', ', 0, 98)
        if cut < 0:
            break
        out.append(line[:cut + 1] + ' &')
        line = indent + '    ' + line[cut + 2:]
    out.append(line)
    return out


# ---- main --------------------------------------------------------------------------------
def main():
    hdr, api, outdir = parse_args(sys.argv)
    funcs, defines, sfields = read_header(hdr)
    consts = eval_constants(defines)
    rules, argkinds, skips = read_api(api)
    ssize = len(sfields)
    for f in ('MPI_SOURCE', 'MPI_TAG', 'MPI_ERROR'):
        if f not in sfields:
            die('MPI_Status has no field ' + f)

    bound, skipped, seen = [], [], set()
    for ret, name, cargs, params in funcs:
        if name in seen:  # declared twice in mpi.h (two areas' blocks): bind it once
            continue
        seen.add(name)
        if name in skips:
            skipped.append((name, skips[name]))
            continue
        if name.endswith(('_c2f', '_f2c')):
            skipped.append((name, 'C-only conversion'))
            continue
        if name.startswith('T_'):
            skipped.append((name, 'the tool interface has C bindings only (MPI-3.1 14.3)'))
            continue
        if params is None:
            skipped.append((name, 'cannot parse the C arguments'))
            continue
        if ret not in ('int', 'double', 'MPI_Aint'):
            skipped.append((name, 'returns %s' % ret))
            continue
        kinds, why = classify(name, params, rules, argkinds)
        if kinds is None and why.startswith('unsupported'):
            skipped.append((name, why))
            continue
        if kinds is None:
            print('gen_fortran: warning: MPI_%s skipped: %s' % (name, why), file=sys.stderr)
            skipped.append((name, why))
            continue
        bound.append((ret, name, params, kinds))

    large = largecount_bound(bound, rules, argkinds)

    # ---- C layer
    c = [C_PROLOGUE % {'strmax': STRMAX}, C_FINFO, C_F22]
    for ret, name, params, kinds in bound + large:
        c.append('\n/* MPI_%s */\n' % name)
        c.append(c_wrapper(ret, name, params, kinds))
    c.append('\n/* no Fortran binding:\n')
    for name, why in skipped:
        c.append(' *   MPI_%s: %s\n' % (name, why))
    c.append(' */\n')

    # ---- constants shared by mpif.h and the modules
    extra = [('MPI_STATUS_SIZE', ssize), ('MPI_ADDRESS_KIND', 8), ('MPI_OFFSET_KIND', 8),
             ('MPI_COUNT_KIND', 8), ('MPI_INTEGER_KIND', 4)]
    extra += [(f, sfields.index(f) + 1) for f in ('MPI_SOURCE', 'MPI_TAG', 'MPI_ERROR')]
    skipc = {'MPI_SOURCE', 'MPI_TAG', 'MPI_ERROR'}   # struct fields, not constants
    ints = [(n, v) for n, (v, t) in sorted(consts.items())
            if n not in skipc and n not in OFFSET_CONSTS] + extra
    commons = [('MPI_BOTTOM', 'mpipriv_bottom', ''), ('MPI_IN_PLACE', 'mpipriv_in_place', ''),
               ('MPI_STATUS_IGNORE', 'mpipriv_status_ignore', '(MPI_STATUS_SIZE)'),
               ('MPI_STATUSES_IGNORE', 'mpipriv_statuses_ignore', '(MPI_STATUS_SIZE,1)'),
               ('MPI_ERRCODES_IGNORE', 'mpipriv_errcodes_ignore', '(1)'),
               ('MPI_UNWEIGHTED', 'mpipriv_unweighted', '(1)'),
               ('MPI_WEIGHTS_EMPTY', 'mpipriv_weights_empty', '(1)')]
    funcs_typed = [(n, r) for r, n, p, k in bound if r != 'int']
    # mpif.h types MPI_WTIME/MPI_WTICK only: programs declare MPI_AINT_ADD/DIFF
    # themselves, as MPICH's mpif.h has them do (a second declaration is an error)
    funcs_typed_h = [(n, r) for n, r in funcs_typed if r == 'double']

    # mpif.h: columns 7..72, so that fixed-form and free-form sources can include it
    h = ['! mpif.h - GENERATED by mpi/bindings/gen_fortran.py from mpi.h: Loom MPI for',
         '! Fortran 77-style programs (INCLUDE \'mpif.h\'); fixed and free source form.',
         '! MPI_SUBARRAYS_SUPPORTED is .FALSE.: buffers must be contiguous.']
    for n, v in ints:
        decl = '      INTEGER %s' % n
        par = '      PARAMETER (%s=%d)' % (n, v)
        if len(par) > 72:
            die('constant line too long for fixed form: ' + n)
        h += [decl, par]
    for n in OFFSET_CONSTS:   # after MPI_OFFSET_KIND
        h += ['      INTEGER(KIND=MPI_OFFSET_KIND) %s' % n,
              '      PARAMETER (%s=%d)' % (n, consts[n][0])]
    h += ['      LOGICAL MPI_SUBARRAYS_SUPPORTED',
          '      PARAMETER (MPI_SUBARRAYS_SUPPORTED=.FALSE.)',
          '      LOGICAL MPI_ASYNC_PROTECTS_NONBLOCKING',
          '      PARAMETER (MPI_ASYNC_PROTECTS_NONBLOCKING=.FALSE.)']
    for n, blk, dims in commons:
        h += ['      INTEGER %s%s' % (n, dims), '      COMMON /%s/ %s' % (blk, n)]
    for n, r in funcs_typed_h:
        h.append('      %s MPI_%s, PMPI_%s' % (FRET[r], n.upper(), n.upper()))
        h.append('      EXTERNAL MPI_%s, PMPI_%s' % (n.upper(), n.upper()))
    for i in range(0, len(PREDEF_CB), 2):   # two a line: fixed form ends at column 72
        h.append('      EXTERNAL ' + ', '.join(PREDEF_CB[i:i + 2]))
    # spawn's CHARACTER sentinels (bindings/fspawn.c) and MPI_CONVERSION_FN_NULL
    h += ['      CHARACTER*1 MPI_ARGV_NULL(1)', '      COMMON /mpipriv_argv_null/ MPI_ARGV_NULL',
          '      CHARACTER*1 MPI_ARGVS_NULL(1,1)',
          '      COMMON /mpipriv_argvs_null/ MPI_ARGVS_NULL',
          '      EXTERNAL MPI_CONVERSION_FN_NULL']

    # module mpi
    m = ['! mpi.f90 - GENERATED by mpi/bindings/gen_fortran.py: module mpi (USE mpi).',
         '! Constants and sentinels as in mpif.h, plus explicit interfaces: choice buffers',
         '! accept any type, kind and rank (gfortran NO_ARG_CHECK), contiguous only.',
         'MODULE mpi',
         '  IMPLICIT NONE',
         '  PUBLIC']
    for n, v in ints:
        m.append('  INTEGER, PARAMETER :: %s = %d' % (n, v))
    for n in OFFSET_CONSTS:
        m.append('  INTEGER(KIND=MPI_OFFSET_KIND), PARAMETER :: %s = %d' % (n, consts[n][0]))
    m += ['  LOGICAL, PARAMETER :: MPI_SUBARRAYS_SUPPORTED = .FALSE.',
          '  LOGICAL, PARAMETER :: MPI_ASYNC_PROTECTS_NONBLOCKING = .FALSE.']
    for n, blk, dims in commons:
        m += ['  INTEGER :: %s%s' % (n, dims), '  COMMON /%s/ %s' % (blk, n)]
    m += wrap_free('EXTERNAL :: ' + ', '.join(PREDEF_CB), '  ')
    m += ['  CHARACTER(LEN=1) :: MPI_ARGV_NULL(1)', '  COMMON /mpipriv_argv_null/ MPI_ARGV_NULL',
          '  CHARACTER(LEN=1) :: MPI_ARGVS_NULL(1,1)',
          '  COMMON /mpipriv_argvs_null/ MPI_ARGVS_NULL',
          '  EXTERNAL :: MPI_CONVERSION_FN_NULL']
    # the profiling names of the typed functions (MPI_WTIME's have interfaces below)
    for n, r in funcs_typed:
        m.append('  %s, EXTERNAL :: PMPI_%s' % (FRET[r], n.upper()))
    m += sizeof_generic()
    m.append('  INTERFACE')
    m += ['    SUBROUTINE MPI_PCONTROL(level, ierror)', '      INTEGER :: level, ierror',
          '    END SUBROUTINE']
    for name, obj, val in KEYVAL_FNS:
        m += ['    ' + ln for ln in keyval_interface(name, obj, val, 'f77', 'MPI_' + name.upper())]
    m += ['    ' + ln for ln in greq_interface('f77', 'MPI_GREQUEST_START')]  # (issue 22)
    for hn in HAND_FNS:
        m += ['    ' + ln for ln in hand_interface(hn, 'f77', 'MPI_' + hn.upper())]
    for ret, name, params, kinds in bound:
        for ln in f_interface(ret, name, params, kinds, 'f77', 'MPI_' + name.upper()):
            m += wrap_free(ln, '    ')
    m += ['  END INTERFACE', 'CONTAINS'] + sizeof_procs(False) + ['END MODULE mpi']

    # module mpi_f08
    g = ['! mpi_f08.f90 - GENERATED by mpi/bindings/gen_fortran.py: module mpi_f08.',
         '! Handles are TYPE(MPI_Comm) etc. (one INTEGER MPI_VAL, the C handle itself),',
         '! ierror is optional, buffers are TYPE(*), DIMENSION(..) (contiguous only).',
         '! Each MPI_X_f08 calls loomf_x_, the C layer of libmpifort (mpi_fortran.c).',
         'MODULE mpi_f08',
         '  USE, INTRINSIC :: ISO_C_BINDING, ONLY : C_PTR, C_LOC, C_INT, C_LONG_LONG',
         '  IMPLICIT NONE',
         '  PRIVATE',
         '  PUBLIC :: C_PTR']
    for ht in HANDLES:
        g += ['  TYPE, BIND(C), PUBLIC :: MPI_%s' % ht, '    INTEGER :: MPI_VAL',
              '  END TYPE']
    g.append('  TYPE, BIND(C), PUBLIC :: MPI_Status')
    for f in sfields:
        g.append('    INTEGER%s :: %s' % ('' if f.startswith('MPI_') else ', PRIVATE', f))
    g.append('  END TYPE')
    for n, (v, t) in sorted(consts.items()):
        if n in skipc or n in OFFSET_CONSTS:
            continue
        if t:
            g.append('  TYPE(%s), PARAMETER, PUBLIC :: %s = %s(%d)' % (t, n, t, v))
        else:
            g.append('  INTEGER, PARAMETER, PUBLIC :: %s = %d' % (n, v))
    for n, v in extra:
        g.append('  INTEGER, PARAMETER, PUBLIC :: %s = %d' % (n, v))
    for n in OFFSET_CONSTS:
        g.append('  INTEGER(KIND=MPI_OFFSET_KIND), PARAMETER, PUBLIC :: %s = %d'
                 % (n, consts[n][0]))
    # noncontiguous sections are described in place (f08_section_procedure); the choice
    # buffers of nonblocking calls are ASYNCHRONOUS, which gfortran honours (TS 29113)
    g += ['  LOGICAL, PARAMETER, PUBLIC :: MPI_SUBARRAYS_SUPPORTED = .TRUE.',
          '  LOGICAL, PARAMETER, PUBLIC :: MPI_ASYNC_PROTECTS_NONBLOCKING = .TRUE.']
    for n, blk, dims in commons:
        if n == 'MPI_STATUS_IGNORE':
            g += ['  TYPE(MPI_Status), PUBLIC, TARGET :: %s' % n]
        elif n == 'MPI_STATUSES_IGNORE':
            g += ['  TYPE(MPI_Status), PUBLIC, TARGET :: %s(1)' % n]
        else:
            g += ['  INTEGER, PUBLIC, TARGET :: %s%s' % (n, dims)]
        g.append('  COMMON /%s/ %s' % (blk, n))
    g += ['  CHARACTER(LEN=1), PUBLIC :: MPI_ARGV_NULL(1)',
          '  COMMON /mpipriv_argv_null/ MPI_ARGV_NULL',
          '  CHARACTER(LEN=1), PUBLIC :: MPI_ARGVS_NULL(1,1)',
          '  COMMON /mpipriv_argvs_null/ MPI_ARGVS_NULL']
    # handle comparisons
    g.append('  INTERFACE OPERATOR(==)')
    g += wrap_free('MODULE PROCEDURE ' + ', '.join('xf_eq_' + t.lower() for t in HANDLES),
                   '    ')
    g.append('  END INTERFACE')
    g.append('  INTERFACE OPERATOR(/=)')
    g += wrap_free('MODULE PROCEDURE ' + ', '.join('xf_ne_' + t.lower() for t in HANDLES),
                   '    ')
    g.append('  END INTERFACE')
    g.append('  PUBLIC :: OPERATOR(==), OPERATOR(/=)')
    # callbacks
    g += ['  ABSTRACT INTERFACE',
          '    SUBROUTINE MPI_User_function(invec, inoutvec, len, datatype)',
          '      IMPORT', '      TYPE(C_PTR), VALUE :: invec, inoutvec',
          '      INTEGER :: len', '      TYPE(MPI_Datatype) :: datatype',
          '    END SUBROUTINE',
          '    SUBROUTINE MPI_Comm_errhandler_function(comm, error_code)',
          '      IMPORT', '      TYPE(MPI_Comm) :: comm', '      INTEGER :: error_code',
          '    END SUBROUTINE',
          '    SUBROUTINE MPI_Win_errhandler_function(win, error_code)',
          '      IMPORT', '      TYPE(MPI_Win) :: win', '      INTEGER :: error_code',
          '    END SUBROUTINE',
          ] + f08_callback_interfaces() + f08_greq_callbacks() + f08_f22_callbacks() + [
          # MPI-4.0 session error handlers (same ABI as the comm ones)
          '    SUBROUTINE MPI_Session_errhandler_function(session, error_code)',
          '      IMPORT', '      TYPE(MPI_Session) :: session', '      INTEGER :: error_code',
          '    END SUBROUTINE',
          '  END INTERFACE',
          '  PUBLIC :: MPI_Session_errhandler_function',
          '  PUBLIC :: MPI_File_errhandler_function, MPI_Datarep_conversion_function',
          '  PUBLIC :: MPI_Datarep_extent_function',
          '  PROCEDURE(MPI_Datarep_conversion_function) :: MPI_CONVERSION_FN_NULL',
          '  PUBLIC :: MPI_CONVERSION_FN_NULL',
          '  PUBLIC :: MPI_Grequest_query_function, MPI_Grequest_free_function',
          '  PUBLIC :: MPI_Grequest_cancel_function',
          '  PUBLIC :: MPI_User_function, MPI_Comm_errhandler_function',
          '  PUBLIC :: MPI_Win_errhandler_function',
          '  PUBLIC :: MPI_Comm_copy_attr_function, MPI_Comm_delete_attr_function',
          '  PUBLIC :: MPI_Type_copy_attr_function, MPI_Type_delete_attr_function',
          '  PUBLIC :: MPI_Win_copy_attr_function, MPI_Win_delete_attr_function',
          '  PUBLIC :: MPI_Copy_function, MPI_Delete_function']
    for i, n in enumerate(PREDEF_CB):
        what = n[4:].split('_')[0]
        what = {'COMM': 'Comm', 'TYPE': 'Type', 'WIN': 'Win'}.get(what)
        kind = ('copy_attr' if 'COPY' in n or 'DUP' in n else 'delete_attr') if what else \
            ('Copy' if 'COPY' in n or 'DUP' in n else 'Delete')
        iface = 'MPI_%s_%s_function' % (what, kind) if what else 'MPI_%s_function' % kind
        g += ['  PROCEDURE(%s) :: %s' % (iface, n), '  PUBLIC :: ' + n]
    g += sizeof_generic()
    # the C layer
    g.append('  INTERFACE')
    for ret, name, params, kinds in bound + large:
        for ln in f_interface(ret, name, params, kinds, 'f08c', 'loomf_' + name.lower()):
            g += wrap_free(ln, '    ')
    g += ['    SUBROUTINE loomf_pcontrol(level, ierror)', '      INTEGER :: level, ierror',
          '    END SUBROUTINE']
    g += f08_section_interfaces()
    g += f08_pmpi_interfaces(bound + large)
    for name, obj, val in KEYVAL_FNS:
        g += ['    ' + ln for ln in keyval_interface(name, obj, val, 'f08c', 'loomf_' + name.lower())]
    g += ['    ' + ln for ln in greq_interface('f08c', 'loomf_grequest_start')]  # (issue 22)
    for hn in HAND_FNS:
        for pre in ('loomf_', 'loomfp_'):
            g += ['    ' + ln for ln in hand_interface(hn, 'f08c', pre + hn.lower())]
    g.append('  END INTERFACE')
    for ret, name, params, kinds in bound + [('int', 'Pcontrol', [('int', 'level', '')],
                                               ['int'])]:
        g.append('  INTERFACE MPI_%s' % name)
        g.append('    MODULE PROCEDURE MPI_%s_f08' % name)
        g.append('  END INTERFACE')
        g.append('  PUBLIC :: MPI_%s, MPI_%s_f08' % (name, name))
    for name, obj, val in KEYVAL_FNS:
        g += ['  INTERFACE MPI_%s' % name, '    MODULE PROCEDURE MPI_%s_f08' % name,
              '  END INTERFACE', '  PUBLIC :: MPI_%s, MPI_%s_f08' % (name, name)]
    g += ['  INTERFACE MPI_Grequest_start', '    MODULE PROCEDURE MPI_Grequest_start_f08',
          '  END INTERFACE', '  PUBLIC :: MPI_Grequest_start, MPI_Grequest_start_f08']
    for hn in HAND_FNS:
        for pre in ('MPI', 'PMPI'):
            g += ['  INTERFACE %s_%s' % (pre, hn), '    MODULE PROCEDURE %s_%s_f08' % (pre, hn),
                  '  END INTERFACE', '  PUBLIC :: %s_%s, %s_%s_f08' % (pre, hn, pre, hn)]
    g += f08_pmpi_generics(bound)
    g += largecount_generics(large)
    g.append('CONTAINS')
    g += ['  ' + ln for ln in greq_interface('f08', 'MPI_Grequest_start_f08')]  # (issue 22)
    for hn in HAND_FNS:
        g += ['  ' + ln for ln in hand_interface(hn, 'f08', 'MPI_%s_f08' % hn)]
        g += ['  ' + ln for ln in hand_interface(hn, 'f08', 'PMPI_%s_f08' % hn, 'loomfp')]
    for name, obj, val in KEYVAL_FNS:
        g += ['  ' + ln for ln in keyval_interface(name, obj, val, 'f08', 'MPI_%s_f08' % name)]
    g += sizeof_procs(True)
    for ht in HANDLES:
        for op, sym in (('eq', '=='), ('ne', '/=')):
            g += ['  ELEMENTAL LOGICAL FUNCTION xf_%s_%s(a, b)' % (op, ht.lower()),
                  '    TYPE(MPI_%s), INTENT(IN) :: a, b' % ht,
                  '    xf_%s_%s = a%%MPI_VAL %s b%%MPI_VAL' % (op, ht.lower(), sym),
                  '  END FUNCTION']
    for ret, name, params, kinds in bound + [('int', 'Pcontrol', [('int', 'level', '')],
                                               ['int'])]:
        for ln in f08_procedure(ret, name, params, kinds):
            g += wrap_free(ln, '  ')
    g += f08_pmpi_procedures(bound)
    g += largecount_procedures(large)
    g.append('END MODULE mpi_f08')

    os.makedirs(outdir, exist_ok=True)
    for fname, lines in (('mpi_fortran.c', None), ('mpif.h', h), ('mpi.f90', m),
                         ('mpi_f08.f90', g)):
        tmp = os.path.join(outdir, fname + '.tmp')
        with open(tmp, 'w') as f:
            f.write(''.join(c) if lines is None else '\n'.join(lines) + '\n')
        os.replace(tmp, os.path.join(outdir, fname))
    print('gen_fortran: %d functions bound, %d without a Fortran binding, %d mpi_f08 '
          'large-count overloads' % (len(bound) + 1, len(skipped), len(large)))


if __name__ == '__main__':
    main()
