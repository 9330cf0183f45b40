// RUN: tessel-opt %s -split-input-file --compose-inline-components -verify-diagnostics | FileCheck %s

// A shared instance called twice: each call site gets the body; the
// components and instances are gone afterwards.
// CHECK-NOT: compose.component
// CHECK-NOT: compose.instance
// CHECK-LABEL: func.func @two_tasks
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[C0:.*]] = tensor.cast %[[X]] : tensor<4x8xf32> to tensor<?x8xf32>
// CHECK: %[[E0:.*]] = tosa.exp %[[C0]] : (tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK: %[[R0:.*]] = tensor.cast %[[E0]] : tensor<?x8xf32> to tensor<4x8xf32>
// CHECK: %[[T1:.*]] = tosa.tanh %[[R0]]
// CHECK: %[[C1:.*]] = tensor.cast %[[T1]] : tensor<4x8xf32> to tensor<?x8xf32>
// CHECK: %[[E1:.*]] = tosa.exp %[[C1]]
// CHECK: %[[R1:.*]] = tensor.cast %[[E1]] : tensor<?x8xf32> to tensor<4x8xf32>
// CHECK: return %[[R0]], %[[R1]]
compose.component @encoder(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %y = tosa.exp %x : (tensor<?x8xf32>) -> tensor<?x8xf32>
  compose.return %y : tensor<?x8xf32>
}
compose.instance @shared of @encoder
func.func @two_tasks(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = compose.call @shared(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = tosa.tanh %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = compose.call @shared(%t) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Components calling components are inlined transitively.
// CHECK-LABEL: func.func @nested
// CHECK-NEXT: %[[A:.*]] = tosa.exp %{{.*}} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[B:.*]] = tosa.tanh %[[A]]
// CHECK-NEXT: return %[[B]]
compose.component @inner(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = tosa.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  compose.return %y : tensor<4xf32>
}
compose.component @outer(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = compose.call @inner(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %z = tosa.tanh %y : (tensor<4xf32>) -> tensor<4xf32>
  compose.return %z : tensor<4xf32>
}
func.func @nested(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = compose.call @outer(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

compose.component private @remote(tensor<4xf32>) -> tensor<4xf32>
func.func @external(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{calls external component 'remote', which has no body to inline; run compose-lower-external-calls first}}
  %y = compose.call @remote(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

compose.component @ping(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{components call each other recursively}}
  %y = compose.call @pong(%x) : (tensor<4xf32>) -> tensor<4xf32>
  compose.return %y : tensor<4xf32>
}
compose.component @pong(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = compose.call @ping(%x) : (tensor<4xf32>) -> tensor<4xf32>
  compose.return %y : tensor<4xf32>
}
func.func @recursive(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = compose.call @ping(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
