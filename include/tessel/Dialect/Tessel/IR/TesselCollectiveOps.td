//===- TesselCollectiveOps.td - MPI collectives upstream lacks -*- tablegen -*-===//
//
// Expert parallelism exchanges tokens between processes with all-to-all-v
// and gathers each process's rows with all-gather. Upstream's `mpi` dialect
// has the communicator (`mpi.comm_world`, `mpi.comm_rank`) and
// send/recv/allreduce but neither of these collectives, so they are here,
// in its style: an `!mpi.comm` operand, semantics of the MPI call they stand
// for. Unlike upstream's memref-only ops they are in destination-passing
// style on tensors too (bufferized like linalg ops), so a lowering on
// tensors can use them; `tessel-mpi-to-calls` lowers the bufferized ops to
// calls of the MPI runtime part (lib/RuntimeMPI).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_COLLECTIVE_OPS_TD
#define TESSEL_COLLECTIVE_OPS_TD

include "tessel/Dialect/Tessel/IR/TesselDialect.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Upstream's `!mpi.comm`, named here rather than by including MPITypes.td,
// whose enums the Tessel enum generator would emit a second time.
def Tessel_MPIComm : Type<CPred<"::llvm::isa<::mlir::mpi::CommType>($_self)">,
                          "MPI communicator", "::mlir::mpi::CommType">,
                     BuildableType<"::mlir::mpi::CommType::get($_builder.getContext())">;

class Tessel_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : Tessel_Op<mnemonic, !listconcat(traits, [
          DestinationStyleOpInterface,
          DeclareOpInterfaceMethods<MemoryEffectsOpInterface>])> {
  let results = (outs Optional<AnyRankedTensor>:$result);
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    MutableOperandRange getDpsInitsMutable() { return getInitMutable(); }
  }];
}

def Tessel_AllToAllVOp : Tessel_CollectiveOp<"all_to_all_v"> {
  let summary = "rows to every process and back, as MPI_Alltoallv";
  let description = [{
    Every process of `comm` (`N` of them) sends `send_rows[q]` rows of
    `input` to each process `q`, in rank order from its first row (the
    blocks are contiguous: displacement = the exclusive prefix sum of the
    counts), and receives `recv_rows[q]` rows from each `q` into `init`, in
    rank order from its first row. A row is a slice of dimension 0: all
    elements past it. `send_rows` and `recv_rows` are `N` x i32; each
    process's `recv_rows[q]` must be what `q` sends it (exchanged first,
    e.g. with `tessel.all_gather`), and the rows must fit `input` and
    `init`. Rows of `init` past the received ones are left undefined.

    Every process of `comm` must reach the op, in the same order as the
    other collectives: it has effects, so it is neither removed nor moved.

    ```mlir
    %r = tessel.all_to_all_v %x, %send, %recv, %comm
        outs(%init : tensor<512x64xf32>)
        : tensor<256x64xf32>, tensor<2xi32>, tensor<2xi32> -> tensor<512x64xf32>
    ```
  }];
  let arguments = (ins AnyShaped:$input,
                       AnyShaped:$send_rows,
                       AnyShaped:$recv_rows,
                       Tessel_MPIComm:$comm,
                       AnyShaped:$init);
  let assemblyFormat = [{
    $input `,` $send_rows `,` $recv_rows `,` $comm
    `outs` `(` $init `:` type($init) `)` attr-dict
    `:` type($input) `,` type($send_rows) `,` type($recv_rows)
    (`->` type($result)^)?
  }];
}

def Tessel_AllGatherOp : Tessel_CollectiveOp<"all_gather"> {
  let summary = "every process's rows, in rank order, as MPI_Allgather";
  let description = [{
    `init` (`N * R` rows for `N` processes of `comm` and an `input` of `R`
    rows, same trailing dimensions) receives process `q`'s `input` as rows
    `[q * R, (q + 1) * R)`, on every process.

    ```mlir
    %all = tessel.all_gather %counts, %comm outs(%init : tensor<2x8xi32>)
        : tensor<1x8xi32> -> tensor<2x8xi32>
    ```
  }];
  let arguments = (ins AnyShaped:$input,
                       Tessel_MPIComm:$comm,
                       AnyShaped:$init);
  let assemblyFormat = [{
    $input `,` $comm `outs` `(` $init `:` type($init) `)` attr-dict
    `:` type($input) (`->` type($result)^)?
  }];
}

#endif // TESSEL_COLLECTIVE_OPS_TD
