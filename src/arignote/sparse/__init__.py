"""Sparse matrices in graphs: Theano 1.0's ``theano.sparse`` on scipy.sparse (csr and csc).

Every sparse op runs on the host (scipy.sparse); a graph mixing them with
dense ops placed on a GPU moves only the dense values. ``shared(m)`` of a
scipy.sparse matrix makes a sparse shared variable. See docs/architecture.md
("Sparse values") and docs/theano-differences.md for what is and is not here.
"""
from arignote.sparse.type import (SparseType, all_dtypes, complex_dtypes, continuous_dtypes,
                                  discrete_dtypes, float_dtypes, int_dtypes, integer_dtypes,
                                  sparse_formats, uint_dtypes)
from arignote.sparse.variable import (SparseConstant, SparseVariable, as_sparse, as_sparse_or_tensor_variable,
                                      as_sparse_variable, constant, csc_dmatrix, csc_fmatrix, csc_matrix,
                                      csr_dmatrix, csr_fmatrix, csr_matrix, matrix)
from arignote.sparse.convert import (CSC, CSM, CSR, Cast, CSMGrad, CSMGradC, CSMProperties, DenseFromSparse,
                                     EnsureSortedIndices, Remove0, SparseFromDense, bcast, cast, ccast,
                                     clean, csc_from_dense, csm_data, csm_indices, csm_indptr,
                                     csm_properties, csm_shape, csr_from_dense, dcast, dense_from_sparse,
                                     ensure_sorted_indices, fcast, icast, lcast, remove0, sp_ones_like,
                                     sp_zeros_like, wcast, zcast)
from arignote.sparse.ops import (UNARY, AddSD, AddSD_ccode, AddSS, ColScaleCSC, RowScaleCSC, AddSSData, add_s_s_data, MulSD, MulSS, MulSV, Neg, SpSum, StructuredAddSV,
                                 Transpose, add, add_s_d, add_s_s, col_scale, eq, ge, gt, le, lt, mul,
                                 mul_s_d, mul_s_s, mul_s_v, neg, neq, row_scale, sp_sum, structured_add,
                                 structured_add_s_v, structured_exp, structured_log, structured_maximum,
                                 structured_minimum, structured_monoid, structured_pow,
                                 structured_sigmoid, sub, transpose)
from arignote.sparse import ops as _ops
from arignote.sparse.products import (Dot, SamplingDot, StructuredDot, StructuredDotCSC, StructuredDotCSR,
                                     StructuredDotGrad, TrueDot, dot, sampling_dot, sd_csc, sd_csr,
                                     structured_dot, structured_dot_grad, true_dot)
from arignote.sparse.usmm import Usmm, usmm
from arignote.sparse.parts import StructuredDotGradCSC, StructuredDotGradCSR, sdg_csc, sdg_csr
from arignote.sparse.diagonal import Diag, SquareDiagonal, diag, square_diagonal
from arignote.sparse.join import HStack, VStack, hstack, vstack
from arignote.sparse.subtensor import (ConstructSparseFromList, GetItem2d, GetItem2Lists, GetItemList,
                                       GetItemScalar, construct_sparse_from_list, get_item_2d,
                                       get_item_2lists, get_item_list, get_item_scalar, sparse_grad)
from arignote.sparse.random import (Binomial, Multinomial, Poisson, csc_dbinomial, csc_fbinomial,
                                    csr_dbinomial, csr_fbinomial, multinomial, poisson)
from arignote.sparse.sharedvar import SparseSharedVariable, SparseTensorSharedVariable, shared, sparse_constructor
from arignote.sparse import grad as _grad  # noqa: F401  (registers the gradient rules)
from arignote.sparse import rewrites as _rewrites  # noqa: F401  (registers the sparse rewrites)
from arignote.sparse.testing import verify_grad_sparse

globals().update({name: getattr(_ops, name) for name in UNARY})

__all__ = [name for name in dir() if not name.startswith("_")] + list(UNARY)
